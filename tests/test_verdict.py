"""kernelindex_sdk.verdict: the one rule that says whether two points differ beyond the noise."""

from __future__ import annotations

import math

import pytest

from kernelindex_sdk import verdict as v
from kernelindex_sdk.errors import ArgumentError
from kernelindex_sdk.verdict import Noise, Point, judge


def test_a_change_within_the_least_noise_a_run_has_is_the_same() -> None:
    """Two single runs without a spread: 0.5% each, so 2% is within 3.29 x 0.71%."""
    found = judge(Point(median=100.0), Point(median=102.0), threshold=0.0)
    assert (found.kind, found.changed) == ("same", False)
    assert found.reason.startswith("within the noise: +2.0%")
    assert found.noise == pytest.approx(v.RUN_NOISE_FLOOR * math.sqrt(2))


def test_slower_and_faster_name_the_worse_and_the_better_way() -> None:
    assert judge(Point(median=100.0), Point(median=130.0)).kind == "regression"
    assert judge(Point(median=130.0), Point(median=100.0)).kind == "improvement"
    # A rate (bandwidth): larger is better.
    assert judge(Point(median=100.0), Point(median=130.0), higher_is_better=True).kind == (
        "improvement"
    )


def test_the_runs_spread_widens_the_noise() -> None:
    """p20-p80 of 10% is a standard deviation of about 5.7%: 20% is within 3.29 times the
    pair's; the same 20% between runs spanning 1% is not."""
    wide = judge(
        Point(median=100.0, p20=95.0, p80=105.0), Point(median=120.0, p20=114.0, p80=126.0)
    )
    assert wide.kind == "same"
    assert "from the runs' p20-p80" in wide.reason
    tight = judge(
        Point(median=100.0, p20=99.5, p80=100.5), Point(median=120.0, p20=119.4, p80=120.6)
    )
    assert tight.kind == "regression"


def test_a_single_sample_has_no_spread() -> None:
    assert Point(median=100.0, p20=90.0, p80=110.0, samples=1).spread is None
    assert Point(median=100.0, p20=90.0, p80=110.0, samples=5).spread == pytest.approx(
        math.log(110 / 90)
    )


def _spread_of(median: float, samples: int | None) -> Point:
    """A run whose p20-p80 spans 2% (a standard deviation of about 1.2%)."""
    return Point(median=median, p20=median * 0.99, p80=median * 1.01, samples=samples)


def test_the_same_spread_from_few_samples_is_judged_more_cautiously() -> None:
    """8% slower with a p20-p80 of 2% on each side: from 1,000 samples the spread is known
    (x1.04) and 8% passes 3.29 x 1.7%; from 5 it may be 2.4 times wider, and 8% is
    within 3.29 x 4.0%."""
    many = judge(_spread_of(100.0, 1000), _spread_of(108.0, 1000))
    few = judge(_spread_of(100.0, 5), _spread_of(108.0, 5))
    assert (many.kind, few.kind) == ("regression", "same")
    assert few.reason.startswith("within the noise: +8.0%")
    assert "from the runs' p20-p80, 5 samples" in few.reason
    assert "1,000 samples" in many.reason
    # An unknown count keeps 0.6.1's reading of the spread as it is.
    assert judge(_spread_of(100.0, None), _spread_of(108.0, None)).kind == "regression"


def test_a_runs_own_noise_is_raised_to_its_upper_bound_for_its_samples() -> None:
    """The factor is the replicates' bound for n - 1 degrees of freedom: small for a GPU
    run of hundreds or thousands of samples, large for a run of a few."""
    as_read = _spread_of(100.0, None).own_sd
    assert as_read == pytest.approx(math.log(1.01 / 0.99) / v.SPREAD_SD)
    factor = {n: _spread_of(100.0, n).own_sd / as_read for n in (2, 5, 100, 1000, 10_000)}
    for n, found in factor.items():
        assert found == pytest.approx(v.upper_sd(1.0, n - 1))
    assert factor[1000] < 1.05
    assert factor[10_000] < factor[1000] < factor[100] < 1.15
    assert 2.3 < factor[5] < 2.5
    assert factor[2] > 10
    # A noisy run's whole p20-p80 is raised alike.
    noisy = Point(median=100.0, p20=80.0, p80=120.0, samples=100)
    assert noisy.own_sd == pytest.approx(v.upper_sd(math.log(1.5), 99))


def test_a_pooled_point_is_judged_by_its_fewest_samples() -> None:
    pooled = v.pool([_spread_of(100.0, 1000), _spread_of(100.0, 5)])
    assert pooled.samples == 5
    assert pooled.own_sd == pytest.approx(_spread_of(100.0, 5).own_sd)
    assert v.pool([_spread_of(100.0, 1000), _spread_of(100.0, None)]).samples is None


def test_the_noise_replicates_show_judges_with_its_upper_bound() -> None:
    """Replicates that move 3% (40 df) keep 8% within the noise; 1 df of them, more."""
    noise = Noise(sd=0.03, df=40)
    assert noise.bound > 0.03
    found = judge(Point(median=100.0), Point(median=108.0), noise=noise)
    assert found.kind == "same"
    assert "from replicates, 40 df" in found.reason
    assert Noise(sd=0.03, df=1).bound > Noise(sd=0.03, df=3).bound > noise.bound


def test_pooled_replicates_know_their_median_better() -> None:
    """Nine replicates divide the noise by 3: 2% between pools passes 3.29 x 0.24%."""
    one = judge(Point(median=100.0), Point(median=102.0), threshold=0.0)
    nine = judge(Point(median=100.0, runs=9), Point(median=102.0, runs=9), threshold=0.0)
    assert (one.kind, nine.kind) == ("same", "regression")


def test_a_change_may_count_when_its_upper_bound_reaches_the_threshold() -> None:
    """The smallest change that counts is the threshold: 4% between two single runs may be
    5% (its bound is 5.2%), 3% may not; between pools of 25 runs, 4% may not either."""
    assert judge(Point(median=100.0), Point(median=104.0)).kind == "regression"
    assert judge(Point(median=100.0), Point(median=103.0)).kind == "same"
    pooled = judge(Point(median=100.0, runs=25), Point(median=104.0, runs=25))
    assert pooled.kind == "same"
    assert pooled.reason.startswith("under the threshold")


def test_a_degraded_point_gets_no_verdict_unless_asked() -> None:
    hot = Point(median=200.0, degraded="throttled (HwSlowdown)")
    found = judge(Point(median=100.0), hot)
    assert found.kind == "degraded"
    assert found.reason == "degraded: NEW throttled (HwSlowdown)"
    assert judge(Point(median=100.0), hot, include_degraded=True).kind == "regression"


@pytest.mark.parametrize(
    ("base", "new", "said"),
    [
        (0.0, 1.0, "BASE median is 0.0: no ratio"),
        (1.0, -1.0, "NEW median is -1.0: no ratio"),
        (1.0, math.inf, "NEW median is inf: no ratio"),
        (1e-300, 1e300, "NEW/BASE of 1e+300 / 1e-300 is not a number"),
    ],
)
def test_medians_without_a_ratio_cannot_be_judged(base: float, new: float, said: str) -> None:
    found = judge(Point(median=base), Point(median=new))
    assert (found.kind, found.ratio, found.reason) == ("cannot-judge", None, said)


def test_at_another_threshold_keeps_the_medians_and_the_noise() -> None:
    found = judge(Point(median=100.0), Point(median=112.0))
    assert found.kind == "regression"
    assert found.at(0.10).kind == "regression"
    stricter = found.at(0.20)
    assert (stricter.kind, stricter.noise, stricter.ratio) == ("same", found.noise, found.ratio)


def test_pool_takes_the_medians_and_counts_the_runs() -> None:
    pooled = v.pool(
        [
            Point(median=10.0, p20=9.0, p80=11.0, samples=100),
            Point(median=30.0, p20=29.0, p80=31.0, samples=80, degraded="hot"),
            Point(median=20.0, p20=19.0, p80=21.0, samples=90),
        ]
    )
    assert (pooled.median, pooled.p20, pooled.p80) == (20.0, 19.0, 21.0)
    assert (pooled.runs, pooled.samples, pooled.degraded) == (3, 80, "hot")
    with pytest.raises(ArgumentError):
        v.pool([])


def test_replicate_noise_pools_the_groups_and_counts_their_degrees_of_freedom() -> None:
    found = v.replicate_noise([[100.0, 100.0 * math.exp(0.02)], [50.0], [10.0, 10.0, 10.0]])
    assert found is not None
    assert found.df == 3
    assert found.sd == pytest.approx(math.sqrt(2 * 0.01**2 / 3))
    assert v.replicate_noise([[1.0], [2.0]]) is None


def test_scatter_noise_is_robust_to_a_step() -> None:
    """Neighbours 1% apart, one 50% step among them: the scatter stays about 1%."""
    levels = [100.0 * (1.01 if i % 2 else 1.0) * (1.5 if i >= 10 else 1.0) for i in range(20)]
    found = v.scatter_noise(levels)
    assert found is not None
    assert found.sd == pytest.approx(1.4826 * math.log(1.01) / math.sqrt(2), rel=1e-6)
    assert v.scatter_noise([1.0, 2.0, 3.0]) is None


def test_a_geomean_over_rows_within_the_noise_is_not_a_change() -> None:
    same = [judge(Point(median=100.0), Point(median=m)) for m in (97.0, 98.0, 101.0)]
    mean = (0.97 * 0.98 * 1.01) ** (1 / 3)
    assert v.summary(same, 0.2, 0.05).kind == "same"
    assert v.summary(same, mean, 0.05).reason.startswith("no row changed that way")
    changed = [*same, judge(Point(median=100.0), Point(median=50.0))]
    assert v.summary(changed, 0.8, 0.05).kind == "improvement"
    # A mean inside the threshold is not a change, however its rows moved.
    assert v.summary(changed, 0.97, 0.05).kind == "same"


def test_bad_arguments_are_argument_errors() -> None:
    with pytest.raises(ArgumentError):
        judge(Point(median=1.0), Point(median=1.0), threshold=-1)
    with pytest.raises(ArgumentError):
        judge(Point(median=1.0), Point(median=1.0), threshold=math.inf)
    with pytest.raises(ArgumentError):
        judge(1.0, Point(median=1.0))  # type: ignore[arg-type]


def test_compare_is_significant_answers_through_the_verdict() -> None:
    from kernelindex_sdk.compare import Stat, is_significant

    for base, new in ((100.0, 104.0), (100.0, 103.0), (100.0, 80.0)):
        found = judge(Point(median=base), Point(median=new)).changed
        assert is_significant(Stat("latency", "ns", base), Stat("latency", "ns", new)) is found


@pytest.mark.parametrize("samples", [0, -3, 1.5, "5", True, math.inf, math.nan])
def test_a_sample_count_that_is_not_a_whole_number_of_one_or_more_is_an_argument_error(
    samples: object,
) -> None:
    with pytest.raises(ArgumentError, match="samples"):
        Point(median=100.0, p20=99.0, p80=101.0, samples=samples)  # type: ignore[arg-type]


def test_a_whole_float_sample_count_is_its_integer() -> None:
    point = Point(median=100.0, samples=5.0)  # type: ignore[arg-type]
    assert point.samples == 5
    assert type(point.samples) is int


def test_points_taken_together_count_their_fewest_samples_or_none_when_one_is_unknown() -> None:
    assert v.fewest_samples([1000, 101, 500]) == 101
    assert v.fewest_samples([1000, None]) is None
    assert v.fewest_samples([]) is None
    pooled = v.pool([Point(median=1.0, samples=7), Point(median=2.0, samples=3)])
    assert pooled.samples == v.fewest_samples([7, 3]) == 3
