# Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
"""The type stubs (rdmad/_rdmad.pyi) name exactly what the module has."""

import ast
import os

import rdmad
from rdmad import _rdmad


def _stub_classes():
    """{class name: the names its stub declares}."""
    path = os.path.join(os.path.dirname(rdmad.__file__), "_rdmad.pyi")
    classes = {}
    for node in ast.parse(open(path).read()).body:
        if not isinstance(node, ast.ClassDef):
            continue
        members = set()
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                members.add(item.name)
            elif isinstance(item, ast.AnnAssign):
                members.add(item.target.id)
        classes[node.name] = members
    return classes


def test_the_stubs_match_the_module():
    stubs = _stub_classes()
    native = {name for name in dir(_rdmad)
              if isinstance(getattr(_rdmad, name), type) and not name.startswith("_")}
    assert set(stubs) == native
    for name, members in stubs.items():
        cls = getattr(_rdmad, name)
        public = {m for m in vars(cls) if not m.startswith("_")}
        dunders = {"__enter__", "__exit__", "__iter__", "__next__"} & set(vars(cls))
        assert members - {"__init__"} == public | dunders, name


def test_help_reads_well():
    for name in ("Client", "Channel", "Listener", "Transfer", "Op", "MemoryRegion"):
        assert getattr(rdmad, name).__doc__, name
    assert "GIL" in rdmad.__doc__
    assert "bytes-like" in rdmad.Channel.send.__doc__
