"""The interactive HTML report: one self-contained page (plotly.js inline, no network) over
bundles, evaluation reports and simulation reports.

- :mod:`~device_sim.html.runs`: run folders -> the report data (designs, evaluations,
  simulations);
- :mod:`~device_sim.html.figures`: the Plotly figure specifications of that data;
- :mod:`~device_sim.html.page`: the page (tables, design panels, figures; ``report.js``,
  ``report.css``).

:func:`report_html` returns the page as a string; the command line writes it.
"""

from __future__ import annotations


def report_html(paths, title: str = "sensorbudget report", evaluations=None) -> str:
    """The HTML report of the run folders ``paths`` and of ``evaluations`` ({name: the
    results.json dictionary}, for an evaluation not written to disk); needs ``plotly``
    (sensorbudget[report])."""
    from .page import render
    from .runs import collect

    return render(collect(paths, evaluations), title)
