"""Juang et al. 2009, section 5.2: the cross-validation of partial blending, on the 40 raises.

Each left-out example's hit point is targeted with the space of the others: where it lies
outside it (whole-body blending of the others misses it, core.reach's "inside"), partial
blending (the product) must beat regular whole-body blending and stay under 0.5 cm (median);
elsewhere it must be no worse. The benchmark
(tests/bench/reach_crossval.py) does all 40; here, by a rule, the examples whose hit points
are the extremes of the 40 along each world axis (hull corners: outside once left out), and
every eighth example by file name.
"""

import numpy as np
import pytest
from rig_names import CMU_NAMES

from core import quat
from core.reach import ReachSpace, cross_validation
from test_reach import all_raises  # noqa: F401  (the fixture)

TURN = quat.from_axis_angle(np.array([1.0, 0, 0]), np.pi / 2)
CHANGES = {  # (the change of the examples, centimetres per unit of the changed examples)
    "as captured": (lambda m: m, 1.0),
    "renamed": (lambda m: m.renamed(CMU_NAMES), 1.0),
    "metres": (lambda m: m.scaled(0.01), 100.0),
    "z up": (lambda m: m.transformed(TURN), 1.0),
}


@pytest.fixture(scope="module")
def left_out(all_raises):  # noqa: F811
    """The examples to leave out, by the rule of the module docstring."""
    own = ReachSpace.build(all_raises, n_blends=0).space.hit_points
    extremes = set(np.argmax(own, axis=0)) | set(np.argmin(own, axis=0))
    return sorted(extremes | set(range(0, len(all_raises), 8)))


@pytest.mark.parametrize("name", list(CHANGES))
def test_partial_blending_reaches_the_left_out_examples_outside_the_shrunk_space(all_raises, left_out, name):  # noqa: F811
    change, cm = CHANGES[name]
    rows = cross_validation([change(m) for m in all_raises], left_out)
    outside = [r for r in rows if r.outside]
    inside = [r for r in rows if not r.outside]
    assert len(outside) >= 4 and inside  # (the extremes are corners of the hull: outside once left out)
    regular = np.median([r.regular for r in outside]) * cm
    product = np.median([r.product for r in outside]) * cm
    # (measured as captured: median 1.22 cm by whole-body blending, 0.24 cm by the product)
    assert product < 0.4 * regular and product < 0.5
    assert max(r.product for r in outside) * cm < 1.0
    assert any(r.partial for r in outside)
    # elsewhere no worse: the product keeps regular blending unless partial blending misses less
    assert all(r.product <= r.regular + 1e-9 for r in inside)
    assert np.median([r.product for r in inside]) <= np.median([r.regular for r in inside])
    assert max(r.product for r in inside) * cm < 1.0  # inside the space: within a centimetre
