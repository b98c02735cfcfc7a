"""The interactive HTML report: one self-contained page (plotly.js inline, no network) over
bundles, evaluation reports, simulation reports and built firmware.

- :mod:`~sensorbudget.device_sim.html.runs`: run folders -> the report data (designs, evaluations,
  simulations, firmware footprints);
- :mod:`~sensorbudget.device_sim.html.figures`: the Plotly figure specifications of that data (every
  string Plotly draws escaped);
- :mod:`~sensorbudget.device_sim.html.summary`: the summary the page opens on (each bundle's chosen
  design, or an evaluation's best), every number with its kind;
- :mod:`~sensorbudget.device_sim.html.confusion`: the confusion matrices of binary and multi-class
  runs (a simulation's device decisions, each evaluated design's held-out decisions);
- :mod:`~sensorbudget.device_sim.html.page`: the page, rendered by the Jinja2 template
  ``templates/page.html.j2`` with autoescape (``report.js``, ``report.css`` inline; data for
  the scripts as JSON blocks that nothing in them can close).

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
