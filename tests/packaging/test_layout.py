"""pyproject.toml against the repository's folders (fast; the built wheel: test_wheel.py).

setuptools is given an explicit ``packages`` list (the folders are mapped with ``package-dir``,
so automatic discovery cannot be used): a new subpackage missing from the list would be left out
of the wheel silently. These tests fail first.
"""

from __future__ import annotations

import re

from tests.packaging.layout import (LIBRARIES, cited_docs, package_folders, pyproject,
                                    source_files)
from tests.paths import REPO


def setuptools_table() -> dict:
    return pyproject()["tool"]["setuptools"]


def test_packages_list_is_every_package_folder_and_the_docs():
    """Every folder: the subpackages and the data folders (templates; docs/), so a new one is
    neither left out of the wheel nor warned about by setuptools."""
    listed = set(setuptools_table()["packages"])
    expected = set(package_folders())
    assert listed == expected, (f"missing from pyproject's packages: {sorted(expected - listed)}; "
                                f"listed but no such package: {sorted(listed - expected)}")


def test_package_dir_maps_every_library_folder_and_docs():
    mapping = setuptools_table()["package-dir"]
    assert mapping == {"sensorbudget": "sensorbudget",
                       **{f"sensorbudget.{name}": name for name in LIBRARIES},
                       "sensorbudget.docs": "docs"}
    for folder in mapping.values():
        assert (REPO / folder).is_dir(), folder


def test_every_data_file_is_declared_and_every_pattern_matches():
    """Each file of a package that is not a module is matched by a package-data pattern, and
    each pattern matches a file (a renamed template folder is noticed)."""
    data = setuptools_table()["package-data"]
    mapping = setuptools_table()["package-dir"]
    folders = package_folders()
    for package, patterns in data.items():
        folder = folders[package]
        for pattern in patterns:
            assert list(folder.glob(pattern)), f"{package}: {pattern!r} matches nothing"
    for package, folder in folders.items():
        own = [p for p in source_files(folder) if p.suffix != ".py"
               and not any(p.is_relative_to(f) for f in folders.values()
                           if f != folder and f.is_relative_to(folder))]
        declared = {q for pattern in data.get(package, []) for q in folder.glob(pattern)}
        assert not set(own) - declared, (package, sorted(map(str, set(own) - declared)))
    assert set(mapping) <= set(folders)


def test_every_cited_document_exists_in_docs():
    cited = cited_docs()
    assert "metrics.md" in cited            # the one predict and evaluate print
    missing = {name: files for name, files in cited.items() if not (REPO / "docs" / name).is_file()}
    assert not missing, missing


def test_license_is_an_spdx_expression_with_its_file():
    project = pyproject()["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_build_requires_a_setuptools_that_reads_spdx_licenses():
    """setuptools reads ``project.license`` as an SPDX expression from version 77 on; older
    ones reject the string. CI's fresh environments build with build-system.requires, the
    wheel test with the environment's own setuptools (the test extra)."""
    def minimum(requirements) -> int:
        found = [re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", r) for r in requirements]
        found = [int(m.group(1)) for m in found if m]
        assert len(found) == 1, requirements
        return found[0]

    data = pyproject()
    assert minimum(data["build-system"]["requires"]) >= 77
    assert minimum(data["project"]["optional-dependencies"]["test"]) >= 77
