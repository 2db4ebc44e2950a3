"""Rendering a one-hop transition (Koyama & Goto 2019; core.hops_render): plain blends, the engine, direct."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core import hops, quat
from core import hops_render as hr
from core.__main__ import main
from core.bvh import read_bvh
from core.rig import body_height, find_rig, leg_length
from broken_rigs import legs_flipped_up

MOCAP = Path(__file__).resolve().parents[2].parent / "shared" / "mocap"
SRC, DST, HOP = "respond_normal_001.bvh", "bow_normal_001.bvh", "guide_normal_001.bvh"
OFFSET = -20
WEIGHT = 0.02  # per second: small enough for stays and hops other than the destination
TOLERANCE = 1e-6  # body heights


@pytest.fixture(scope="module")
def clips(mocap):
    return {f"{name}.bvh": mocap(f"bandai1/{name}") for name in ("bow_normal_001", "bye_normal_001",
                                                                 "guide_normal_001", "respond_normal_001")}


@pytest.fixture(scope="module")
def table(clips):
    return hops.precompute(clips, SRC, DST, OFFSET, weight=WEIGHT)


@pytest.fixture(scope="module")
def rig(clips):
    return find_rig(clips[SRC])


def one_hop_trigger(table) -> int:
    """The first trigger whose choice is a hop other than the destination, with both stays, at least
    a blend's frames after the source's first and before the destination's last."""
    c, t, L = table.choices, table.triggers, table.blend_frames
    settled = t + c[:, 2] + L + c[:, 3] + L
    fits = (c[:, 0] != table.dst) & (c[:, 2] > 0) & (c[:, 3] > 0) & (t >= L) & (
        settled + L <= table.frames[table.dst] + table.offset)
    return int(t[np.flatnonzero(fits)[0]])


def body(motion, rig) -> np.ndarray:
    """(F, J', 3) global positions of the pelvis and every joint below it (the distance's points)."""
    return motion.global_positions()[:, hops.body_joints(motion, rig)]


def ground_residual(a: np.ndarray, b: np.ndarray, up: np.ndarray) -> float:
    """Largest distance left between points ``a`` and ``b`` (..., 3) after the best turn about up and
    move along the ground of b (Kabsch by SVD on the ground coordinates): 0 when b is a rigidly
    placed a."""
    frame = hops.ground_frame(up)
    p, q = a.reshape(-1, 3) @ frame.T, b.reshape(-1, 3) @ frame.T
    pc, qc = p[:, :2] - p[:, :2].mean(axis=0), q[:, :2] - q[:, :2].mean(axis=0)
    u, _, vt = np.linalg.svd(qc.T @ pc)
    turn = u @ np.diag([1.0, np.sign(np.linalg.det(u @ vt))]) @ vt
    return float(np.sqrt(np.sum((pc - qc @ turn) ** 2, axis=-1) + (p[:, 2] - q[:, 2]) ** 2).max())


# ---------------------------------------------------------------- plain blends


def test_the_plain_render_plays_the_source_then_the_hop_then_the_destination_at_its_fixed_timing(table, clips, rig):
    render, _ = hr.render_entry(table, clips, one_hop_trigger(table), method="plain")
    tl, out, first = render.timeline, render.motion, render.first
    src, hop, dst = clips[tl.src_name], clips[tl.hop_name], clips[tl.dst_name]
    a, u, L = tl.first_blend, tl.second_blend, tl.blend_frames
    assert tl.stay_src > 0 and tl.stay_hop > 0 and first == max(tl.trigger - L, 0)
    assert out.n_frames == tl.settled + L - first
    # the source as captured, untouched, up to the first blend
    assert np.allclose(out.rotations[: a - first], src.rotations[first:a], rtol=0, atol=1e-12)
    assert np.array_equal(out.positions[: a - first], src.positions[first:a])
    height = body_height(src, rig)
    up = src.skeleton.up
    g = body(out, rig)
    # the hop alone for s_h frames, its frame h at source frame h + o_sh, moved as a whole only
    alone = np.arange(a + L, u)
    assert len(alone) == tl.stay_hop
    assert ground_residual(body(hop, rig)[alone - tl.hop_offset], g[alone - first], up) < TOLERANCE * height
    # the destination after the last blend: frame k at source frame k + offset, moved as a whole only
    after = np.arange(tl.settled, first + out.n_frames)
    assert ground_residual(body(dst, rig)[after - tl.offset], g[after - first], up) < TOLERANCE * height
    below = np.flatnonzero(hops.body_joints(src, rig) != rig.pelvis)
    below = hops.body_joints(src, rig)[below]
    assert np.allclose(out.rotations[after - first][:, below], dst.rotations[after - tl.offset][:, below], atol=1e-12)
    # every blend frame is a mix: no copy of either side
    blend = np.arange(a, a + L) - first
    assert np.all(np.abs(out.positions[blend, rig.pelvis] - src.positions[a:a + L, rig.pelvis]).max(axis=-1) > 0)


def test_the_hop_and_the_destination_sit_where_the_search_measured_them(table, clips, rig):
    """The body points of each blend window, as rendered, are as far apart as the distance the
    search chose them by: D1 + D2 is the table's S."""
    trigger = one_hop_trigger(table)
    tl = hr.timeline_of(table, trigger)
    src, hop, dst = clips[tl.src_name], clips[tl.hop_name], clips[tl.dst_name]
    up = src.skeleton.up
    hop_placed, dst_placed, _, _ = hr.placed_clips(src, hop, dst, tl, rig, up)
    leg = 0.5 * (leg_length(src, rig, "L") + leg_length(src, rig, "R"))
    a, u, L = tl.first_blend, tl.second_blend, tl.blend_frames

    def mean_square(p, q):
        return float(np.mean(np.sum((p - q) ** 2, axis=-1))) / leg ** 2

    d1 = mean_square(body(src, rig)[a:a + L], body(hop_placed, rig)[a - tl.hop_offset:a - tl.hop_offset + L])
    d2 = mean_square(body(hop_placed, rig)[u - tl.hop_offset:u - tl.hop_offset + L],
                     body(dst_placed, rig)[u - tl.offset:u - tl.offset + L])
    assert d1 + d2 == pytest.approx(table.smoothness[table.index(trigger)], rel=1e-9, abs=1e-12)


def test_a_hop_that_is_the_destination_at_its_own_timing_is_the_direct_transition_delayed(table, clips):
    tl = hr.timeline_of(table, int(table.triggers[5]), direct=True)
    delayed = hr.HopTimeline(tl.trigger, OFFSET, 4, 0, OFFSET, tl.blend_frames, True, DST, SRC, DST)
    late = hr.plain_render(clips[SRC], clips[DST], clips[DST], delayed)
    later_trigger = hr.timeline_of(table, tl.trigger + 4, direct=True)
    direct = hr.direct_render(clips[SRC], clips[DST], later_trigger, span=(late.first, late.first + late.motion.n_frames))
    assert delayed.second_blend is None and delayed.settled == tl.trigger + 4 + tl.blend_frames
    np.testing.assert_allclose(late.motion.rotations, direct.motion.rotations, atol=1e-12)
    np.testing.assert_allclose(late.motion.positions, direct.motion.positions, atol=1e-9)


def test_direct_is_the_crossfade_onto_the_destination_placed_by_the_window_at_the_trigger(table, clips, rig):
    """The direct render against the obvious construction: the destination's body fitted onto the
    source's over the window at the trigger (SVD), turned by the pelvis, then each joint slerped
    frame by frame with smoothstep weights."""
    trigger = int(table.triggers[20])
    render, _ = hr.render_entry(table, clips, trigger, method="direct")
    src, dst = clips[SRC], clips[DST]
    L, up = table.blend_frames, src.skeleton.up
    frame = hops.ground_frame(up)
    p = body(src, rig)[trigger:trigger + L].reshape(-1, 3) @ frame.T
    q = body(dst, rig)[trigger - OFFSET:trigger - OFFSET + L].reshape(-1, 3) @ frame.T
    pc, qc = p[:, :2] - p[:, :2].mean(axis=0), q[:, :2] - q[:, :2].mean(axis=0)
    uu, _, vt = np.linalg.svd(qc.T @ pc)
    turn2 = (uu @ vt).T  # rotates q's ground coordinates onto p's: p ~ turn2 @ q
    angle = np.arctan2(turn2[1, 0], turn2[0, 0])
    shift2 = p[:, :2].mean(axis=0) - turn2 @ q[:, :2].mean(axis=0)
    from core.align import Alignment

    placed = Alignment(angle, shift2 @ frame[:2], up, "test").apply(dst, rig.pelvis)
    assert render.first == trigger - L and render.motion.n_frames == 3 * L
    out = render.motion
    for i in range(3 * L):
        f = render.first + i
        k = f - OFFSET
        if f < trigger:
            expected_rot, expected_pos = src.rotations[f], src.positions[f]
        elif f < trigger + L:
            w = hr.crossfade_weights(L)[f - trigger]
            expected_rot = quat.slerp(src.rotations[f], placed.rotations[k], w)
            expected_pos = (1 - w) * src.positions[f] + w * placed.positions[k]
        else:
            expected_rot, expected_pos = placed.rotations[k], placed.positions[k]
        assert np.allclose(quat.standardize(out.rotations[i]), quat.standardize(expected_rot), atol=1e-9)
        assert np.allclose(out.positions[i], expected_pos, atol=1e-6)


def test_the_plain_render_does_not_depend_on_names_units_or_up_axis(table, clips, rig):
    trigger = one_hop_trigger(table)
    tl = hr.timeline_of(table, trigger)
    names = {"Foot_L": "LeftFoot", "Foot_R": "RightFoot", "UpperLeg_L": "thigh.L", "UpperLeg_R": "thigh.R"}
    z_up = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.pi / 2)

    def other_rig(m):
        return m.renamed(names).scaled(0.01).transformed(z_up)

    src, hop, dst = clips[tl.src_name], clips[tl.hop_name], clips[tl.dst_name]
    for render in (hr.plain_render, hr.engine_render):
        base = render(src, hop, dst, tl).motion.global_positions()
        again = render(other_rig(src), other_rig(hop), other_rig(dst), tl).motion.global_positions()
        expected = quat.mul_vec(z_up, 0.01 * base)
        assert np.abs(again - expected).max() < TOLERANCE * 0.01 * body_height(src, rig), render.__name__


# ---------------------------------------------------------------- the engine


def test_the_engine_keeps_the_source_the_hop_s_stay_and_the_destination_as_captured(table, clips, rig):
    trigger = one_hop_trigger(table)
    render, _ = hr.render_entry(table, clips, trigger, method="engine")
    tl = render.timeline
    clip_list = hr.engine_clips(clips[tl.src_name], clips[tl.hop_name], clips[tl.dst_name], tl)
    assert [c.core_range for c in clip_list] == [(0, tl.first_blend - 1), (tl.blend_frames,
                                                                           tl.blend_frames + tl.stay_hop - 1),
                                                 (min(tl.blend_frames, clip_list[2].motion.n_frames - 1),
                                                  clip_list[2].motion.n_frames - 1)]
    assert [c.start for c in clip_list] == [0, tl.first_blend, tl.second_blend]
    g = render.motion.global_positions()
    height = body_height(clips[SRC], rig)
    for k, clip in enumerate(clip_list):
        placed = clip.motion if k == 0 else render.plan.pairs[k - 1].alignment.apply(clip.motion, rig.pelvis)
        frames = np.arange(clip.core_range[0], clip.core_range[1] + 1)
        at = clip.start + frames - render.first
        inside = (at >= 0) & (at < len(g))
        assert inside.sum() >= min(len(frames), tl.blend_frames)
        assert np.abs(g[at[inside]] - placed.global_positions()[frames[inside]]).max() < TOLERANCE * height, clip.name
    # without a second stay the hop's core is the one frame after the first blend
    no_stay = hr.HopTimeline(tl.trigger, tl.hop_offset, tl.stay_src, 0, OFFSET, tl.blend_frames, False, HOP, SRC, DST)
    hop_clip = hr.engine_clips(clips[SRC], clips[HOP], clips[DST], no_stay)[1]
    assert hop_clip.core_range == (tl.blend_frames, tl.blend_frames)


def test_a_clip_that_plays_no_frame_alone_keeps_the_blend_frame_where_it_weighs_most(clips, rig):
    """A trigger at the source's first frame and a destination that ends with its blend: the
    source's core is the first blend frame, the destination's its last; both still play as captured."""
    L = 15
    n = clips[DST].n_frames
    tl = hr.HopTimeline(0, 0, 0, 0, 2 * L - n, L, False, DST, SRC, DST)  # the hop: the destination at frame 0
    sides = hr.engine_clips(clips[SRC], clips[DST], clips[DST], tl)
    assert sides[0].core_range == (0, 0) and sides[2].core_range == (L - 1, L - 1)
    render = hr.engine_render(clips[SRC], clips[DST], clips[DST], tl)
    assert render.first == 0 and render.motion.n_frames == 2 * L
    g = render.motion.global_positions()
    height = body_height(clips[SRC], rig)
    assert np.abs(g[0] - clips[SRC].global_positions()[0]).max() < TOLERANCE * height
    placed = render.plan.pairs[-1].alignment.apply(sides[2].motion, rig.pelvis)
    assert np.abs(g[-1] - placed.global_positions()[-1]).max() < TOLERANCE * height
    # the same without a hop (the destination at its own timing): two clips, neither inside the other
    direct = hr.HopTimeline(0, L - n, 0, 0, L - n, L, True, DST, SRC, DST)
    sides = hr.engine_clips(clips[SRC], clips[DST], clips[DST], direct)
    assert len(sides) == 2 and sides[0].start < sides[1].start and sides[0].end < sides[1].end
    render = hr.engine_render(clips[SRC], clips[DST], clips[DST], direct)
    assert render.motion.n_frames == L and len(render.plan.pairs) == 1
    g = render.motion.global_positions()
    assert np.abs(g[0] - clips[SRC].global_positions()[0]).max() < TOLERANCE * height
    placed = render.plan.pairs[0].alignment.apply(sides[1].motion, rig.pelvis)
    assert np.abs(g[-1] - placed.global_positions()[-1]).max() < TOLERANCE * height


# ---------------------------------------------------------------- the table's clips


def test_a_render_refuses_clips_other_than_the_table_s(table, clips, tmp_path):
    assert table.digests == tuple(hops.clip_digest(clips[name]) for name in table.hops)
    assert table.frames.tolist() == [clips[name].n_frames for name in table.hops]
    table.save(tmp_path / "table.npz")
    again = hops.HopTable.load(tmp_path / "table.npz")
    assert again.digests == table.digests and np.array_equal(again.frames, table.frames)
    trigger = one_hop_trigger(table)
    shorter = dict(clips, **{SRC: clips[SRC][:-1]})
    with pytest.raises(ValueError, match=f"'{SRC}' has {clips[SRC].n_frames - 1} frames.*had {clips[SRC].n_frames}"):
        hr.render_entry(table, shorter, trigger, method="plain")
    edited = clips[DST].with_arrays(positions=clips[DST].positions + [0.0, 0.01, 0.0])
    with pytest.raises(ValueError, match=f"'{DST}' is not the one the table was computed from"):
        hr.render_entry(table, dict(clips, **{DST: edited}), trigger, method="direct")
    with pytest.raises(ValueError, match="missing"):
        hr.render_entry(table, {SRC: clips[SRC]}, trigger)


# ---------------------------------------------------------------- the command line


def test_precompute_then_render_on_the_command_line(tmp_path, capsys, mocap):
    CLI_SRC = "bye_normal_001.bvh"
    library = tmp_path / "library"
    library.mkdir()
    for name in ("bye_normal_001", "guide_normal_001", "respond_normal_001"):
        (library / f"{name}.bvh").symlink_to(MOCAP / "bandai1" / f"{name}.bvh")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "bow_normal_001.bvh").symlink_to(MOCAP / "bandai1" / "bow_normal_001.bvh")
    table_path = tmp_path / "table.npz"
    assert main(["hops", "precompute", str(library), "--src", str(library / CLI_SRC), "--dst",
                 str(elsewhere / "bow_normal_001.bvh"), "--offset", "0", "-o", str(table_path), "--weight",
                 "0.005"]) == 0
    table = hops.HopTable.load(table_path)
    assert len(table.digests) == len(table.hops) == len(table.frames)
    trigger = int(table.triggers[len(table.triggers) // 2])
    capsys.readouterr()
    out = tmp_path / "out.bvh"
    # the table's folder holds no clip: the message names the file and the option to pass
    assert main(["hops", "render", str(table_path), "--trigger", str(trigger), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--library" in err and "not in" in err and str(tmp_path) in err
    # the destination lies elsewhere: --dst
    assert main(["hops", "render", str(table_path), "--trigger", str(trigger), "-o", str(out), "--library",
                 str(library), "--direct"]) == 2
    assert "bow_normal_001.bvh" in capsys.readouterr().err and not out.exists()
    for flags in ([], ["--plain"], ["--direct"]):
        assert main(["hops", "render", str(table_path), "--trigger", str(trigger), "-o", str(out), "--library",
                     str(library), "--dst", str(elsewhere / "bow_normal_001.bvh"), *flags]) == 0
        printed = capsys.readouterr().out
        written = read_bvh(out)
        clips = {n: read_bvh(library / n) for n in (CLI_SRC, HOP, "respond_normal_001.bvh")}
        clips["bow_normal_001.bvh"] = read_bvh(elsewhere / "bow_normal_001.bvh")
        method = {"--plain": "plain", "--direct": "direct"}.get(flags[0] if flags else "", "engine")
        expected, _ = hr.render_entry(table, clips, trigger, method=method)
        assert written.n_frames == expected.motion.n_frames and f"wrote {written.n_frames} frames" in printed
        assert np.abs(written.global_positions() - expected.motion.global_positions()).max() < 1e-3
    # a clip that is not the table's any more is refused by name
    (library / CLI_SRC).unlink()
    (library / CLI_SRC).symlink_to(MOCAP / "bandai1" / "byebye_normal_001.bvh")
    assert main(["hops", "render", str(table_path), "--trigger", str(trigger), "-o", str(out), "--library",
                 str(library), "--dst", str(elsewhere / "bow_normal_001.bvh"), "--plain"]) == 2
    err = capsys.readouterr().err
    assert CLI_SRC in err and "precompute the table again" in err
    assert main(["hops", "render", str(table_path), "--trigger", "100000", "-o", str(out), "--library",
                 str(library)]) == 2
    assert "not in the table" in capsys.readouterr().err


# ---------------------------------------------------------------- every file a table names is an input


@pytest.fixture
def library_with_table(table, tmp_path):
    """A library folder of real copies of the table's clips, the table saved beside them."""
    library = tmp_path / "library"
    library.mkdir()
    for name in table.hops:
        (library / name).write_bytes((MOCAP / "bandai1" / name).read_bytes())
    table.save(library / "table.npz")
    return library


def _spellings(library: Path, name: str, tmp_path: Path, monkeypatch) -> list[str]:
    """Seven ways to name ``library / name``: absolute, relative, ./, dir/../, //, a symlink to
    the file and the file through a symlinked folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link.bvh").symlink_to(library / name)
    (tmp_path / "folder").symlink_to(library)
    return [str(library / name), f"library/{name}", f"./library/{name}", f"library/../library/{name}",
            f"{tmp_path}//library//{name}", "link.bvh", f"folder/{name}"]


def test_a_render_never_writes_over_a_clip_the_table_names_even_one_it_does_not_read(
        table, library_with_table, tmp_path, monkeypatch, capsys):
    """The direct transition reads the source and the destination only; the table names every
    clip of its library, and each is the user's file all the same."""
    unread = next(name for name in table.hops if name not in (table.hops[table.src], table.hops[table.dst]))
    before = (library_with_table / unread).read_bytes()
    trigger = int(table.triggers[len(table.triggers) // 2])
    for spelling in _spellings(library_with_table, unread, tmp_path, monkeypatch):
        assert main(["hops", "render", str(library_with_table / "table.npz"), "--trigger", str(trigger), "--direct",
                     "-o", spelling]) == 2, spelling
        assert unread in capsys.readouterr().err
        assert (library_with_table / unread).read_bytes() == before, spelling


def test_a_table_naming_a_path_outside_its_library_is_refused(table, library_with_table, tmp_path, capsys):
    """Clip names in a table are file names inside the library, nothing else: a table naming
    ../../etc/passwd is refused when it is read, and no such file is opened."""
    for bad in ("../../../../etc/passwd", "/etc/passwd", "sub/clip.bvh", "..", ""):
        arrays = table.to_arrays()
        arrays["hops"] = np.array((bad,) + table.hops[1:], dtype=str)
        np.savez(tmp_path / "forged.npz", **arrays)
        with pytest.raises(ValueError, match="file name"):
            hops.HopTable.load(tmp_path / "forged.npz")
        assert main(["hops", "render", str(tmp_path / "forged.npz"), "--trigger", str(int(table.triggers[0])),
                     "-o", str(tmp_path / "out.bvh"), "--library", str(library_with_table)]) == 2
        err = capsys.readouterr().err
        assert "root:" not in err and "Traceback" not in err


def test_a_hand_made_table_that_is_not_one_gets_a_message_not_a_traceback(table, library_with_table, tmp_path,
                                                                            capsys):
    def forged(**changes):
        arrays = table.to_arrays()
        arrays.update(changes)
        path = tmp_path / f"forged-{len(list(tmp_path.glob('forged-*')))}.npz"  # (one file a case)
        np.savez(path, **arrays)
        return path

    def damaged():
        """The table compressed, a byte in its first member's data flipped (zlib's error)."""
        import zipfile

        path = tmp_path / "damaged.npz"
        np.savez_compressed(path, **table.to_arrays())
        data = bytearray(path.read_bytes())
        with zipfile.ZipFile(path) as archive:
            info = max(archive.infolist(), key=lambda i: i.compress_size)
        at = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + info.compress_size // 2
        for k in range(16):
            data[at + k] ^= 0xFF
        path.write_bytes(bytes(data))
        return path

    empty_npz = tmp_path / "empty.npz"
    np.savez(empty_npz)
    empty_file = tmp_path / "nothing.npz"
    empty_file.write_bytes(b"")
    choices = table.choices.copy()
    choices[0, 0] = len(table.hops) + 3
    cases = {"an empty .npz": empty_npz, "an empty file": empty_file,
             "a source out of range": forged(src=np.int64(99)), "a hop out of range": forged(choices=choices),
             "fps 0": forged(fps=np.float64(0.0)), "fps 1e308": forged(fps=np.float64(1e308)),
             "costs of two columns": forged(smoothness=np.stack([table.smoothness] * 2, axis=1)),
             "a damaged member": damaged(), "a folder": tmp_path}
    for what, path in cases.items():
        for command in (["hops", "show", str(path)],
                        ["hops", "render", str(path), "--trigger", str(int(table.triggers[0])), "-o",
                         str(tmp_path / "out.bvh"), "--library", str(library_with_table)]):
            assert main(command) == 2, what
            err = capsys.readouterr().err
            assert "Traceback" not in err and "hop table" in err or "not a file" in err, (what, err)
    assert not (tmp_path / "out.bvh").exists()


@pytest.mark.parametrize("method", [hr.ENGINE, hr.PLAIN, hr.DIRECT])
def test_an_older_tables_destination_of_another_scale_or_with_legs_up_is_refused(table, clips, method):
    """The precompute now refuses such a pair; a table written before it, which keeps no digests to
    tell the clips apart, may still name one. Each render refuses it, naming the clip."""
    old = replace(table, digests=())
    trigger = int(table.triggers[0])
    for odd, message in ((clips[DST].scaled(0.01), r"^the destination 'bow_normal_001.bvh' has bones 0.01 times as "
                                                   r"long as those of the source 'respond_normal_001.bvh'"),
                         (legs_flipped_up(clips[DST]), r"^the destination 'bow_normal_001.bvh': the legs point up")):
        with pytest.raises(ValueError, match=message):
            hr.render_entry(old, dict(clips, **{DST: odd}), trigger, method=method)
