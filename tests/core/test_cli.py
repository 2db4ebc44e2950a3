"""The command line: ``python -m core analyze`` and ``python -m core demo``."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
MOCAP = ROOT.parent / "shared" / "mocap"


def test_analyze_json_lists_segments_and_orientations(capsys):
    if not MOCAP.is_dir():
        pytest.skip("no real capture")
    assert main(["analyze", str(MOCAP / "bandai1" / "walk_normal_001.bvh"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"fps", "segments", "orientation_start", "orientation_end"}
    assert report["segments"][0]["start"] == 0
    assert all(s["phase"] in {"DS", "LS", "RS", "NS"} for s in report["segments"])
    assert all(a["end"] + 1 == b["start"] for a, b in zip(report["segments"], report["segments"][1:]))
    assert abs(sum(v * v for v in report["orientation_start"]) - 1.0) < 1e-9


def test_analyze_prints_a_readable_table(capsys):
    if not MOCAP.is_dir():
        pytest.skip("no real capture")
    assert main(["analyze", str(MOCAP / "bandai1" / "bow_normal_001.bvh")]) == 0
    out = capsys.readouterr().out
    assert "DS" in out and "body orientation" in out


def test_a_malformed_file_gives_a_message_not_a_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition Yposition\n}\n")
    assert main(["analyze", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "line 5" in err and "Traceback" not in err


def test_a_rig_without_legs_names_what_was_found(tmp_path, capsys):
    chain = tmp_path / "chain.bvh"
    chain.write_text(
        "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        " JOINT b\n {\n  OFFSET 0 10 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  End Site\n  {\n   OFFSET 0 10 0\n  }\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.0333333\n"
        "0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0 0\n"
    )
    assert main(["analyze", str(chain)]) == 2
    err = capsys.readouterr().err
    assert "a" in err and "b" in err and "left.hip" in err


def test_map_overrides_a_role(capsys):
    if not MOCAP.is_dir():
        pytest.skip("no real capture")
    clip = str(MOCAP / "bandai1" / "walk_normal_001.bvh")
    assert main(["analyze", clip, "--map", "left.ankle=NoSuchJoint"]) == 2
    assert "NoSuchJoint" in capsys.readouterr().err
    assert main(["analyze", clip, "--map", "left.toe=none", "--map", "right.toe=none", "--json"]) == 0


def test_demo_analyses_every_embedded_clip():
    out = subprocess.run([sys.executable, "-m", "core", "demo", "--json"], cwd=ROOT, capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert set(report) == {"walk", "kick", "jump", "turn", "stand"}
    assert "NS" in {s["phase"] for s in report["jump"]["segments"]}


def test_synthesize_writes_the_motion_and_the_plan(tmp_path, capsys):
    if not MOCAP.is_dir():
        pytest.skip("no real capture")
    walk, bow = MOCAP / "bandai1" / "walk_normal_001.bvh", MOCAP / "bandai1" / "bow_normal_001.bvh"
    out, plan = tmp_path / "out.bvh", tmp_path / "plan.json"
    code = main(["synthesize", f"{walk}@0:0-100", f"{bow}@150:30-137", "-o", str(out), "--plan", str(plan), "-W", "0.2"])
    assert code == 0
    from core.bvh import read_bvh

    motion = read_bvh(out)
    assert motion.n_frames == 150 + 138 and motion.skeleton.names == read_bvh(walk).skeleton.names
    data = json.loads(plan.read_text())
    assert data["responsiveness"] == 0.2 and data["pairs"][0]["method"] == "connection"
    # each gap's quality against the untouched clips, in the JSON and the summary
    quality = data["pairs"][0]["quality"]
    assert set(quality) == {"skate", "skate_untouched", "accel", "accel_untouched", "accel_reference", "pop",
                            "pop_untouched", "pop_reference", "pop_joint"}
    assert data["pairs"][0]["gap"] == [100, 180]
    printed = capsys.readouterr().out
    assert "connection" in printed and "gap 100 .. 180: skate" in printed and "untouched clips" in printed


@pytest.mark.parametrize("spec", ["walk.bvh@", "walk.bvh@x", "walk.bvh@0:5", "walk.bvh@:5", "@3"])
def test_a_bad_clip_spec_shows_the_expected_form(spec, capsys, tmp_path):
    assert main(["synthesize", spec, "-o", str(tmp_path / "o.bvh")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and ("PATH@START" in err or "walk.bvh@0:30-120" in err)


def _frames(path):
    """The BVH's motion lines, one per frame."""
    lines = Path(path).read_text().splitlines()
    return lines[[i for i, line in enumerate(lines) if line.startswith("Frame Time")][0] + 1 :]


def test_a_clip_without_start_runs_as_soon_as_possible_after_the_one_before(tmp_path, capsys):
    """2014 section 5 on the command line: bow.bvh (and bow.bvh@:CS-CE) start before the walk
    ends, the summary says where, and the blend begins where the walk's core ends."""
    if not MOCAP.is_dir():
        pytest.skip("no real capture")
    walk, bow = MOCAP / "bandai1" / "walk_normal_001.bvh", MOCAP / "bandai1" / "bow_normal_001.bvh"
    for spec in (f"{bow}", f"{bow}@:30-137"):
        out, plan = tmp_path / "out.bvh", tmp_path / "plan.json"
        assert main(["synthesize", f"{walk}@0:0-100", spec, "-o", str(out), "--plan", str(plan)]) == 0
        printed = capsys.readouterr().out
        assert "'bow_normal_001' runs as soon as possible: from output frame " in printed
        start = int(printed.split("from output frame ")[1].split(",")[0])
        assert start < 195  # the walk has 195 frames: sooner than after it
        data = json.loads(plan.read_text())
        assert data["pairs"][0]["gap"][0] == 100 and not data["rejected"]
        assert min(s["start"] for s in data["pairs"][0]["segments"]) == 100


@pytest.mark.parametrize("current", [80, 150, 220])
def test_with_a_current_frame_the_frames_played_are_those_of_the_clips_before(tmp_path, capsys, current):
    """Eq. (17): output frames 0 to FRAME are, line for line, the synthesis without the new clip
    (FRAME before the walk's core ends, in its tail, or after its last frame)."""
    if not MOCAP.is_dir():
        pytest.skip("no real capture")
    walk, kick = MOCAP / "bandai1" / "walk_normal_001.bvh", MOCAP / "bandai1" / "kick_normal_001.bvh"
    alone, both = tmp_path / "alone.bvh", tmp_path / "both.bvh"
    assert main(["synthesize", f"{walk}@0:0-100", "-o", str(alone)]) == 0
    assert main(["synthesize", f"{walk}@0:0-100", f"{kick}@:15-60", "--current", str(current), "-o", str(both)]) == 0
    assert f"(after the current frame {current})" in capsys.readouterr().out
    before, after = _frames(alone), _frames(both)
    k = min(current + 1, len(before))
    assert len(after) > len(before) and after[:k] == before[:k]


def test_current_without_a_clip_to_place_says_what_it_is_for(two_clips, tmp_path, capsys):
    walk, bow = two_clips
    assert _synthesize(walk, bow, "-o", tmp_path / "o.bvh", "--current", "50") == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "without @START" in err and not (tmp_path / "o.bvh").exists()


# --------------------------------------------------------------------------
# no data loss through paths


@pytest.fixture
def two_clips(tmp_path):
    """Copies of two real clips in a folder of their own (the shared ones are never written near)."""
    if not MOCAP.is_dir():
        pytest.skip("no real capture")
    clips = tmp_path / "clips"
    clips.mkdir()
    walk, bow = clips / "walk.bvh", clips / "bow.bvh"
    walk.write_bytes((MOCAP / "bandai1" / "walk_normal_001.bvh").read_bytes())
    bow.write_bytes((MOCAP / "bandai1" / "bow_normal_001.bvh").read_bytes())
    return walk, bow


def _synthesize(walk, bow, *more):
    return main(["synthesize", f"{walk}@0:0-100", f"{bow}@150:30-137", *map(str, more)])


@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink", "hard link"])
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(two_clips, capsys, spelling):
    walk, bow = two_clips
    before = walk.read_bytes()
    out = {"same": walk, "dotted": walk.parent / ".." / walk.parent.name / walk.name}.get(spelling)
    if spelling == "symlink":
        out = walk.parent / "link.bvh"
        out.symlink_to(walk)
    elif spelling == "hard link":
        out = walk.parent / "hard.bvh"
        import os

        os.link(walk, out)
    assert _synthesize(walk, bow, "-o", out) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: -o") and "walk" in err and "another file" in err
    assert walk.read_bytes() == before


def test_a_plan_written_over_an_input_or_the_output_is_refused(two_clips, tmp_path, capsys):
    walk, bow = two_clips
    before = bow.read_bytes()
    assert _synthesize(walk, bow, "-o", tmp_path / "out.bvh", "--plan", bow) == 2
    assert "error: --plan" in capsys.readouterr().err and bow.read_bytes() == before
    assert _synthesize(walk, bow, "-o", tmp_path / "out.bvh", "--plan", tmp_path / "out.bvh") == 2
    assert "-o and --plan are the same file" in capsys.readouterr().err
    assert not (tmp_path / "out.bvh").exists(), "nothing is written when the outputs clash"


def test_every_output_folder_is_checked_before_anything_is_written(two_clips, tmp_path, capsys):
    walk, bow = two_clips
    out = tmp_path / "out.bvh"
    assert _synthesize(walk, bow, "-o", out, "--plan", tmp_path / "missing" / "plan.json") == 2
    err = capsys.readouterr().err
    assert "--plan" in err and "does not exist" in err
    assert not out.exists(), "the BVH is not written when the plan cannot be"
    assert _synthesize(walk, bow, "-o", tmp_path) == 2
    assert "is a folder" in capsys.readouterr().err


def test_outputs_are_written_whole_and_leave_no_temporary_file(two_clips, tmp_path):
    walk, bow = two_clips
    out, plan = tmp_path / "out.bvh", tmp_path / "plan.json"
    assert _synthesize(walk, bow, "-o", out, "--plan", plan) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clips", "out.bvh", "plan.json"]
    json.loads(plan.read_text())


def test_a_write_that_fails_half_way_leaves_the_old_file_as_it_was(tmp_path, monkeypatch):
    import core.files as files

    target = tmp_path / "out.bvh"
    target.write_text("the user's earlier work\n")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        files.write_atomically(target, "HIERARCHY\n" * 1000)
    assert target.read_text() == "the user's earlier work\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bvh"], "the temporary file is gone"


def test_writing_through_a_symlink_replaces_the_file_it_points_to(tmp_path):
    from core.files import write_atomically

    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomically(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


# --------------------------------------------------------------------------
# messages that say what is actually wrong


@pytest.mark.parametrize("core, words", [
    ("106-105", "core 106..105 ends before it starts"),
    ("-5-10", "core -5..10 is not inside its frames 0.."),
    ("5", "the core '5' must be two whole clip frames, FIRST-LAST"),
    ("5-x", "the core '5-x' must be two whole clip frames"),
])
def test_a_bad_core_says_what_is_wrong_with_it(two_clips, tmp_path, capsys, core, words):
    walk, bow = two_clips
    assert main(["synthesize", f"{walk}@0:{core}", f"{bow}@150:30-137", "-o", str(tmp_path / "o.bvh")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and words in err, err
    assert "START" not in err, "the start was fine"


def test_a_clip_whose_rate_would_resample_it_into_gigabytes_is_refused():
    """A second clip at another rate is resampled to the first's; one whose rates make that
    a terabyte is a mistake, refused with the sizes, not a MemoryError."""
    from core.demo import demo_clips
    from core.motion import Motion
    from core.synthesize import Clip, synthesize

    walk = demo_clips()["walk"].motion
    slow = Motion(walk.skeleton, walk.rotations, walk.positions, 1e-6)  # made in code: no reader to refuse it
    with pytest.raises(ValueError, match=r"'slow' at 1e-06 fps, resampled to the first clip's 30 fps, would need "
                                         r"[\d,.]+ GiB \([\d,]+ frames"):
        synthesize([Clip(walk, 0, None, "walk"), Clip(slow, walk.n_frames + 10, None, "slow")])


def test_outputs_differing_only_in_case_are_refused(two_clips, tmp_path, capsys):
    """On macOS and Windows Out.bvh and out.bvh are one file: the plan would replace the motion."""
    walk, bow = two_clips
    assert _synthesize(walk, bow, "-o", tmp_path / "Out.bvh", "--plan", tmp_path / "out.bvh") == 2
    assert "-o and --plan are the same file" in capsys.readouterr().err
    assert not (tmp_path / "Out.bvh").exists() and not (tmp_path / "out.bvh").exists()


def test_a_read_only_output_or_a_device_is_refused_and_kept(two_clips, tmp_path, capsys):
    """Renaming over a file needs only its folder writable: a file marked read-only is
    refused (as a plain write refuses it), not silently replaced; a device is not a file."""
    import stat

    walk, bow = two_clips
    protected = tmp_path / "keep.bvh"
    protected.write_text("the user's protected take\n")
    protected.chmod(stat.S_IRUSR | stat.S_IRGRP)
    try:
        assert _synthesize(walk, bow, "-o", protected) == 2
        assert "read-only" in capsys.readouterr().err
        assert protected.read_text() == "the user's protected take\n"
    finally:
        protected.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert _synthesize(walk, bow, "-o", "/dev/null") == 2
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("frame_time", ["1e-300", "1e-9", "1e-10", "5"])
def test_an_impossible_frame_time_is_one_line_and_exit_2(two_clips, tmp_path, capsys, frame_time):
    """1e-300 overflowed, 1e-9 took 1.9 GB and 1e-10 raised MemoryError: now one line, exit 2."""
    walk, bow = two_clips
    text = bow.read_text()
    line = next(l for l in text.splitlines() if l.lower().startswith("frame time"))
    bow.write_text(text.replace(line, f"Frame Time: {frame_time}"))
    assert _synthesize(walk, bow, "-o", tmp_path / "o.bvh") == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1 and "outside 0.001 .. 1 s" in err
    assert "Traceback" not in err and not (tmp_path / "o.bvh").exists()


def test_a_file_with_a_value_no_capture_has_is_refused_by_every_command_and_nothing_is_written(tmp_path, capsys):
    """The trust issue: a position of 1e308 went through analyze, synthesize, blend, assemble,
    reach and hops render, and came out as NaN with exit 0."""
    walk = MOCAP / "bandai1" / "walk_normal_001.bvh"
    lines = walk.read_text().splitlines()
    first_frame = next(i for i, line in enumerate(lines) if line.strip() == "MOTION") + 3
    values = lines[first_frame + 7].split()
    values[0] = "1e308"
    lines[first_frame + 7] = " ".join(values)
    bad = tmp_path / "huge.bvh"
    bad.write_text("\n".join(lines))
    other = str(MOCAP / "bandai1" / "bow_normal_001.bvh")
    out = tmp_path / "out.bvh"
    library = tmp_path / "library"
    library.mkdir()
    (library / "huge.bvh").write_text(bad.read_text())
    (library / "bow.bvh").write_text(Path(other).read_text())
    commands = [["analyze", str(bad)],
                ["synthesize", f"{bad}@0", f"{other}@100", "-o", str(out)],
                ["blend", str(bad), other, "-o", str(out)],
                ["hops", "precompute", str(library), "--src", str(library / "huge.bvh"), "--dst",
                 str(library / "bow.bvh"), "--offset", "0", "-o", str(tmp_path / "t.npz")]]
    for command in commands:
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert f"line {first_frame + 8}" in err and "median bone length" in err, (command, err)
    assert not out.exists() and not (tmp_path / "t.npz").exists()


def test_the_same_file_given_twice_is_two_clips(tmp_path, capsys):
    """The trust issue: the same file twice, one copy rejected, ended in an IndexError (the plan
    told its clips apart by name, and both had the file's)."""
    walk = str(MOCAP / "bandai1" / "walk_normal_001.bvh")
    out = tmp_path / "out.bvh"
    assert main(["synthesize", f"{walk}@0", f"{walk}@5", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "rejected walk_normal_001 #2" in printed and out.exists()


def test_two_clips_of_one_name_are_refused_by_the_engine(mocap):
    from core.synthesize import Clip, synthesize

    walk = mocap("bandai1/walk_normal_001")
    with pytest.raises(ValueError, match="two clips are named 'walk'"):
        synthesize([Clip(walk, 0, None, "walk"), Clip(walk, 300, None, "walk")])


def test_ctrl_c_says_nothing_was_written_rather_than_a_traceback(tmp_path, capsys, monkeypatch):
    import core.bvh

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.bvh, "read_bvh", interrupted)
    walk = str(MOCAP / "bandai1" / "walk_normal_001.bvh")
    assert main(["synthesize", f"{walk}@0", f"{walk}@200", "-o", str(tmp_path / "out.bvh")]) == 130
    assert "interrupted: no file was written" in capsys.readouterr().err
    assert not (tmp_path / "out.bvh").exists()
