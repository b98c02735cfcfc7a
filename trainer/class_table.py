"""A CSV target column of text class names (walk, run, sit): a multi-class table.

:func:`encode` runs on the CSV rows before they are parsed as numbers: when the one target
column holds a cell that is not a number, its class names (sorted) replace the cells by their
index, so the table parses as usual; :func:`attach` then turns the index column of the loaded
:class:`sensorbudget.trainer.data.Table` into one-hot columns named by class (task ``multiclass``, as
labelled recordings give) and keeps ``class_target`` = (the column's name, each kept row's
class name; "" where the cell was missing). :func:`encode_values` does the same for a column
already read (ARFF nominal attributes, NPZ text arrays). No module of the package is imported
here (the table module imports this one).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

def _number(cell: str, decimal: str) -> bool:
    try:
        float(cell.replace(decimal, ".") if decimal != "." else cell)
    except ValueError:
        return False
    return True


def encode(rows: list, columns: list, decimal: str, missing) -> list | None:
    """Class names (sorted) of the one target column (``columns``: the CSV's target column
    indices) when it holds text (a cell that is neither a number nor one of the ``missing``
    tokens), its cells (after the header row) replaced in place by the class index; None,
    untouched, for numeric or several target columns."""
    if len(columns) != 1:
        return None
    column = columns[0]
    cells = [row[column].strip() if column < len(row) else "" for row in rows[1:]]
    if all(c in missing or _number(c, decimal) for c in cells):
        return None
    classes = sorted({c for c in cells if c not in missing})
    index = {c: str(j) for j, c in enumerate(classes)}
    for row, cell in zip(rows[1:], cells):
        if column < len(row) and cell not in missing:
            row[column] = index[cell]
    return classes


def encode_values(cells, missing) -> tuple:
    """(class names sorted, float index per cell: NaN where missing) of one column of text
    classes (an ARFF nominal attribute, an NPZ text array), as :func:`encode` numbers a CSV's.

    >>> encode_values(["run", "sit", "?", "run"], {"?"})
    (['run', 'sit'], array([ 0.,  1., nan,  0.]))
    """
    texts = ["" if c is None else str(c).strip() for c in cells]
    classes = sorted({c for c in texts if c not in missing})
    index = {c: float(j) for j, c in enumerate(classes)}
    return classes, np.array([index.get(c, np.nan) for c in texts])


def attach(classes, table):
    """``table`` with its class-index column as one-hot columns named by ``classes`` (a NaN
    index gives a NaN row: a missing target), task multiclass and ``class_target``; the table
    unchanged when ``classes`` is None."""
    if classes is None:
        return table
    idx = table.Y[:, 0]
    known = ~np.isnan(idx)
    Y = np.full((len(idx), len(classes)), np.nan)
    Y[known] = np.eye(len(classes))[idx[known].astype(np.intp)]
    values = np.where(known, np.asarray(classes, dtype=object)[np.where(known, idx, 0)
                                                               .astype(np.intp)], "")
    return replace(table, Y=Y, target_names=list(classes), task="multiclass",
                   class_target=(table.target_names[0], values.astype(str)))
