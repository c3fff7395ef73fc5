"""The static dashboard: Health, Trends, Compare and Runs, written as plain files.

``kernelindex site OUT/`` calls :func:`write_site`. The pages open from ``file://`` and
from any static host, with no network and no build step: the chart library (uPlot,
MIT) ships inside this package, and data files are scripts split per series.
"""

from ._bandwidth import GPU_BANDWIDTH, peak_bandwidth
from ._build import MARKER, RecordSource, SiteSummary, build_site, write_site
from ._model import Step, StepFinder

__all__ = [
    "GPU_BANDWIDTH",
    "MARKER",
    "RecordSource",
    "SiteSummary",
    "Step",
    "StepFinder",
    "build_site",
    "peak_bandwidth",
    "write_site",
]
