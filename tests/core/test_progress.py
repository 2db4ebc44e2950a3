"""Long work reports its progress (issue 26 item 6): the callback hears fractions that never go back and end at 1."""

from core import hops
from core.assemble import assemble
from core.progress import part_of
from core.reach import ReachSpace


def heard() -> tuple[list, object]:
    fractions = []
    return fractions, fractions.append


def rising_to_one(fractions: list) -> bool:
    return (len(fractions) >= 2 and all(0.0 <= f <= 1.0 for f in fractions)
            and all(a <= b for a, b in zip(fractions, fractions[1:])) and fractions[-1] == 1.0)


def test_a_step_reports_within_its_share_of_the_whole():
    fractions, progress = heard()
    step = part_of(progress, 0.5, 0.75)
    for f in (0.0, 0.5, 1.0, 2.0):
        step(f)
    assert fractions == [0.5, 0.625, 0.75, 0.75]
    assert part_of(None, 0.0, 1.0) is None


def test_the_reach_space_reports_its_first_build(mocap):
    examples = [mocap(f"bandai2-raise/raise-up-right-hand_normal_00{i}") for i in (1, 2, 3)]
    fractions, progress = heard()
    ReachSpace.build(examples, n_blends=20, progress=progress)
    assert rising_to_one(fractions) and len(fractions) >= len(examples), fractions


def test_the_hop_search_reports_its_clips_measured(mocap):
    names = ["bandai1/bow_normal_001", "bandai1/call_normal_001", "bandai1/walk_normal_001"]
    clouds, _ = hops.library_point_clouds([mocap(n) for n in names], 2)
    fractions, progress = heard()
    hops.search_trigger(clouds, 2, 0, 40, offset=20, blend_frames=15, weight=0.01 / 30, progress=progress)
    assert rising_to_one(fractions) and len(fractions) == len(names) + 1, fractions


def test_an_assembly_reports_its_library_and_pieces(mocap):
    query = mocap("bandai1/walk_normal_001")
    library = {name: mocap(f"bandai1/{name}") for name in ("walk-left_normal_001", "punch_normal_001")}
    fractions, progress = heard()
    assemble(query, {"upper": library}, contacts=None, progress=progress)
    assert rising_to_one(fractions) and len(fractions) >= len(library) + 1, fractions
