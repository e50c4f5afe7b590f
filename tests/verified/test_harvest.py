"""The harvest recipe on its own: rebuilding an entry function's module from a source file, without MCP.

Each test writes a small source file inline and asserts the whole rebuilt `code`, so a block in the
wrong order, a missing dependency or an extra one fails.
"""

from __future__ import annotations

import ast
import hashlib
from textwrap import dedent

import pytest

from papercode.verified.harvest import HarvestedModule, NotRebuilt, SourceModule, interpreter, requires_of, sha256_prefix


def parse(source: str) -> SourceModule:
    module = SourceModule.parse(dedent(source))
    assert isinstance(module, SourceModule)
    return module


def harvest(source: str, entry: str = "entry") -> HarvestedModule:
    result = parse(source).rebuild(entry)
    assert isinstance(result, HarvestedModule)
    return result


def not_rebuilt(source: str | bytes, entry: str = "entry", language: str | None = "python") -> NotRebuilt:
    module = SourceModule.parse(source, language)
    result = module.rebuild(entry) if isinstance(module, SourceModule) else module
    assert isinstance(result, NotRebuilt)
    return result


# No dependencies


def test_entry_without_dependencies_is_its_unparsed_function() -> None:
    source = "def entry(a,b = 2):   # spacing and comments are not kept\n    return (a+b)\n"
    function = ast.parse(source).body[0]

    assert harvest(source).code == ast.unparse(function) + "\n" == "def entry(a, b=2):\n    return a + b\n"


def test_sha256_prefix_is_the_first_16_hex_digits_of_the_code_digest() -> None:
    result = harvest("""\
        import math

        def entry():
            return math.pi
        """)

    assert result.sha256_prefix == hashlib.sha256(result.code.encode()).hexdigest()[:16]
    assert sha256_prefix(result.code) == result.sha256_prefix


def test_sha256_prefix_hashes_utf8() -> None:
    assert sha256_prefix("é\n") == hashlib.sha256("é\n".encode()).hexdigest()[:16]


# The import block


@pytest.mark.parametrize(
    ("source", "code"),
    [
        pytest.param(
            """\
        import sys
        LIMIT = 3
        import json

        def entry():
            return json.dumps([sys.argv, LIMIT])
        """,
            dedent("""\
        import sys
        import json

        LIMIT = 3

        def entry():
            return json.dumps([sys.argv, LIMIT])
        """),
            id="imports_form_one_block_in_file_order_before_other_dependencies",
        ),
        pytest.param(
            """\
        from os import path, sep

        def entry():
            return path.join('a', 'b')
        """,
            "from os import path, sep\n\ndef entry():\n    return path.join('a', 'b')\n",
            id="import_is_rendered_whole_even_when_only_one_name_is_used",
        ),
        pytest.param(
            """\
        import os
        import sys
        import  os

        def entry():
            return os.sep + sys.platform
        """,
            "import os\nimport sys\n\ndef entry():\n    return os.sep + sys.platform\n",
            id="identical_import_lines_are_kept_once",
        ),
        pytest.param(
            """\
        import os
        import os.path

        def entry():
            return os.getcwd()
        """,
            "import os\nimport os.path\n\ndef entry():\n    return os.getcwd()\n",
            id="different_imports_of_the_same_name_are_all_kept",
        ),
        pytest.param(
            """\
        import os
        import sys

        def entry():
            return sys.argv
        """,
            "import sys\n\ndef entry():\n    return sys.argv\n",
            id="unused_import_is_not_included",
        ),
    ],
)
def test_the_import_block(source: str, code: str) -> None:
    assert harvest(source).code == code


# What an import binds


@pytest.mark.parametrize(
    ("source", "code"),
    [
        pytest.param(
            """\
        import os.path

        def entry():
            return os.getcwd()
        """,
            "import os.path\n\ndef entry():\n    return os.getcwd()\n",
            id="import_of_a_dotted_module_binds_its_first_component",
        ),
        pytest.param(
            """\
        import os.path as osp

        def entry():
            return osp.join('a', 'b')
        """,
            "import os.path as osp\n\ndef entry():\n    return osp.join('a', 'b')\n",
            id="import_of_a_dotted_module_as_an_alias_binds_the_alias",
        ),
        pytest.param(
            """\
        import os.path as osp

        def entry():
            return os.sep
        """,
            "def entry():\n    return os.sep\n",
            id="import_of_a_dotted_module_as_an_alias_does_not_bind_its_first_component",
        ),
        pytest.param(
            """\
        from collections import OrderedDict as Ordered

        def entry():
            return Ordered()
        """,
            "from collections import OrderedDict as Ordered\n\ndef entry():\n    return Ordered()\n",
            id="from_import_as_an_alias_binds_the_alias",
        ),
        pytest.param(
            """\
        from collections import OrderedDict as Ordered

        def entry():
            return OrderedDict()
        """,
            "def entry():\n    return OrderedDict()\n",
            id="from_import_as_an_alias_does_not_bind_the_original_name",
        ),
    ],
)
def test_what_an_import_binds(source: str, code: str) -> None:
    assert harvest(source).code == code


# Transitive dependencies


@pytest.mark.parametrize(
    ("source", "code"),
    [
        pytest.param(
            """\
        import math

        def square(x):
            return x * x

        def hypotenuse(a, b):
            return math.sqrt(square(a) + square(b))

        def unused():
            return 0

        def entry():
            return hypotenuse(3, 4)
        """,
            dedent("""\
        import math

        def square(x):
            return x * x

        def hypotenuse(a, b):
            return math.sqrt(square(a) + square(b))

        def entry():
            return hypotenuse(3, 4)
        """),
            id="dependencies_are_followed_through_functions",
        ),
        pytest.param(
            """\
        SCALE = 2

        class Scaler:

            def apply(self, value):
                return value * SCALE

        def entry():
            return Scaler().apply(1)
        """,
            dedent("""\
        SCALE = 2

        class Scaler:

            def apply(self, value):
                return value * SCALE

        def entry():
            return Scaler().apply(1)
        """),
            id="dependencies_are_followed_through_a_class_methods",
        ),
        pytest.param(
            """\
        class Base:
            pass

        class Child(Base):
            pass

        def entry():
            return Child()
        """,
            "class Base:\n    pass\n\nclass Child(Base):\n    pass\n\ndef entry():\n    return Child()\n",
            id="dependencies_are_followed_through_a_class_bases",
        ),
        pytest.param(
            """\
        A = 1
        OFFSET = 10
        UNUSED = 5

        def shift(x):
            return x + OFFSET
        B = shift(A) + 1

        def entry():
            return B
        """,
            dedent("""\
        A = 1

        OFFSET = 10

        def shift(x):
            return x + OFFSET

        B = shift(A) + 1

        def entry():
            return B
        """),
            id="dependencies_are_followed_through_every_name_an_assignment_reads",
        ),
        pytest.param(
            """\
        Number = float
        LIMIT: Number = 3

        def entry():
            return LIMIT
        """,
            "Number = float\n\nLIMIT: Number = 3\n\ndef entry():\n    return LIMIT\n",
            id="annotated_assignment_binds_its_target_and_reads_its_annotation",
        ),
        pytest.param(
            """\
        MODE = 'fast'
        OTHER = 1
        MODE = 'slow'

        def entry():
            return MODE
        """,
            "MODE = 'fast'\n\nMODE = 'slow'\n\ndef entry():\n    return MODE\n",
            id="every_top_level_statement_binding_a_name_is_included",
        ),
        pytest.param(
            """\
        low, high = (0, 9)

        def entry():
            return high
        """,
            "low, high = (0, 9)\n\ndef entry():\n    return high\n",
            id="assignment_to_several_targets_binds_each_of_them",
        ),
    ],
)
def test_transitive_dependencies(source: str, code: str) -> None:
    assert harvest(source).code == code


# Names read outside the body


@pytest.mark.parametrize(
    ("source", "code"),
    [
        pytest.param(
            """\
        from numbers import Number

        def entry(x: Number):
            return x
        """,
            "from numbers import Number\n\ndef entry(x: Number):\n    return x\n",
            id="name_used_only_in_an_annotation_is_a_dependency",
        ),
        pytest.param(
            """\
        Result = int

        def entry() -> Result:
            return 0
        """,
            "Result = int\n\ndef entry() -> Result:\n    return 0\n",
            id="name_used_only_in_the_return_annotation_is_a_dependency",
        ),
        pytest.param(
            """\
        import functools

        @functools.cache
        def entry(n):
            return n
        """,
            "import functools\n\n@functools.cache\ndef entry(n):\n    return n\n",
            id="name_used_only_in_a_decorator_is_a_dependency",
        ),
        pytest.param(
            """\
        DEFAULT = 3

        def entry(n=DEFAULT):
            return n
        """,
            "DEFAULT = 3\n\ndef entry(n=DEFAULT):\n    return n\n",
            id="name_used_only_in_a_default_value_is_a_dependency",
        ),
    ],
)
def test_names_read_outside_the_body_are_dependencies(source: str, code: str) -> None:
    assert harvest(source).code == code


# Names the entry binds itself are not dependencies


@pytest.mark.parametrize(
    ("source", "code"),
    [
        pytest.param(
            """\
        total = 100

        def entry(items):
            total = sum(items)
            return total
        """,
            "def entry(items):\n    total = sum(items)\n    return total\n",
            id="name_assigned_in_the_entry_is_not_a_dependency",
        ),
        # `del` makes the name local to the function, as an assignment would.
        pytest.param(
            """\
        scratch = 1

        def entry():
            if scratch:
                del scratch
        """,
            "def entry():\n    if scratch:\n        del scratch\n",
            id="name_deleted_in_the_entry_is_not_a_dependency",
        ),
        pytest.param(
            """\
        def helper():
            return 1

        def entry():

            def helper():
                return 2
            return helper()
        """,
            "def entry():\n\n    def helper():\n        return 2\n    return helper()\n",
            id="nested_function_is_not_a_dependency",
        ),
        pytest.param(
            """\
        class Box:
            pass

        def entry():

            class Box:
                pass
            return Box()
        """,
            "def entry():\n\n    class Box:\n        pass\n    return Box()\n",
            id="nested_class_is_not_a_dependency",
        ),
        pytest.param(
            """\
        import json

        def entry(text):
            import json
            return json.loads(text)
        """,
            "def entry(text):\n    import json\n    return json.loads(text)\n",
            id="name_imported_inside_the_entry_is_not_a_dependency",
        ),
        pytest.param(
            """\
        import os

        def entry():
            import os.path
            return os.getcwd()
        """,
            "def entry():\n    import os.path\n    return os.getcwd()\n",
            id="dotted_module_imported_inside_the_entry_binds_its_first_component",
        ),
    ],
)
def test_names_the_entry_binds_itself_are_not_dependencies(source: str, code: str) -> None:
    assert harvest(source).code == code


@pytest.mark.parametrize(
    ("name", "signature"),
    [
        ("first", "def entry(first, /):"),
        ("value", "def entry(value):"),
        ("args", "def entry(*args):"),
        ("flag", "def entry(*, flag):"),
        ("kwargs", "def entry(**kwargs):"),
    ],
    ids=["positional_only", "positional", "var_positional", "keyword_only", "var_keyword"],
)
def test_parameter_is_not_a_dependency(name: str, signature: str) -> None:
    result = harvest(f"{name} = 0\n\n{signature}\n    return {name}\n")

    assert result.code == f"{signature}\n    return {name}\n"


# Order, recursion, cycles


@pytest.mark.parametrize(
    ("source", "code"),
    [
        pytest.param(
            """\
        EARLY = 0

        def entry():
            return later() + LATE + EARLY

        def later():
            return 1
        LATE = 2
        """,
            dedent("""\
        EARLY = 0

        def later():
            return 1

        LATE = 2

        def entry():
            return later() + LATE + EARLY
        """),
            id="dependencies_come_in_file_order_and_the_entry_last",
        ),
        pytest.param(
            """\
        def entry(n):
            return 1 if n == 0 else n * entry(n - 1)
        """,
            "def entry(n):\n    return 1 if n == 0 else n * entry(n - 1)\n",
            id="recursive_entry_is_not_its_own_dependency",
        ),
        pytest.param(
            """\
        def entry(n):
            return step(n)

        def step(n):
            return entry(n - 1) if n else 0
        """,
            "def step(n):\n    return entry(n - 1) if n else 0\n\ndef entry(n):\n    return step(n)\n",
            id="helper_calling_back_into_the_entry_does_not_repeat_the_entry",
        ),
        pytest.param(
            """\
        def ping(n):
            return pong(n - 1) if n else 'ping'

        def pong(n):
            return ping(n - 1) if n else 'pong'

        def entry():
            return ping(3)
        """,
            dedent("""\
        def ping(n):
            return pong(n - 1) if n else 'ping'

        def pong(n):
            return ping(n - 1) if n else 'pong'

        def entry():
            return ping(3)
        """),
            id="cycle_between_two_helpers_includes_each_once",
        ),
        pytest.param(
            """\
        async def fetch():
            return 1

        async def entry():
            return await fetch()
        """,
            "async def fetch():\n    return 1\n\nasync def entry():\n    return await fetch()\n",
            id="async_entry_and_async_dependency_are_rebuilt",
        ),
    ],
)
def test_order_recursion_and_cycles(source: str, code: str) -> None:
    assert harvest(source).code == code


def test_one_parse_rebuilds_several_entries() -> None:
    module = parse("""\
        import math

        def area(r):
            return math.pi * r * r

        def label(name):
            return name.title()
        """)

    assert module.rebuild("area") == harvest("import math\n\ndef area(r):\n    return math.pi * r * r\n", entry="area")
    assert module.rebuild("label") == harvest("def label(name):\n    return name.title()\n", entry="label")


# Outcomes


def test_file_that_does_not_parse_is_a_syntax_error_naming_the_interpreter() -> None:
    result = not_rebuilt("def entry(:\n    return 1\n")

    assert result.outcome == "syntax_error"
    assert interpreter() in result.reason


@pytest.mark.parametrize("source", [b"def entry():\n    return 0\x00\n", "def entry():\n    return 0\x00\n"], ids=["bytes", "str"])
def test_nul_byte_is_a_syntax_error(source: str | bytes) -> None:
    assert not_rebuilt(source).outcome == "syntax_error"


def test_text_with_a_lone_surrogate_is_a_syntax_error() -> None:
    # Text decoded with errors="surrogateescape" keeps undecodable bytes as lone surrogates; parsing it raises UnicodeEncodeError.
    assert not_rebuilt("def entry():\n    return '\udcff'\n").outcome == "syntax_error"


@pytest.mark.parametrize(
    "source",
    [
        "def other():\n    return 0\n",
        "class Holder:\n\n    def entry(self):\n        return 0\n",
        "def outer():\n\n    def entry():\n        return 0\n    return entry\n",
        "class entry:\n    pass\n",
        "entry = lambda: 0\n",
    ],
    ids=["absent", "method_only", "nested_only", "class_only", "assignment_only"],
)
def test_entry_that_is_not_a_top_level_function_is_missing(source: str) -> None:
    result = not_rebuilt(source)

    assert result.outcome == "entry_missing"
    assert "'entry'" in result.reason


@pytest.mark.parametrize("language", ["javascript", None])
def test_language_other_than_python_is_unsupported(language: str | None) -> None:
    assert not_rebuilt("def entry():\n    return 0\n", language=language).outcome == "unsupported_language"


def test_bytes_with_a_pep263_coding_line_are_decoded_with_it() -> None:
    module = SourceModule.parse(b"# -*- coding: latin-1 -*-\ndef entry():\n    return '\xe9'\n")
    assert isinstance(module, SourceModule)

    result = module.rebuild("entry")

    assert isinstance(result, HarvestedModule)
    assert result.code == "def entry():\n    return '\u00e9'\n"


# requires


@pytest.mark.parametrize(
    ("source", "requires"),
    [
        pytest.param(
            """\
        import torch
        import numpy as np
        from scipy.linalg import inv
        import numpy.linalg

        def entry():
            return (torch, np, inv, numpy)
        """,
            ("numpy", "scipy", "torch"),
            id="requires_lists_third_party_top_level_modules_sorted_and_once",
        ),
        pytest.param(
            """\
        import os.path
        import json
        from collections import deque

        def entry():
            return (os, json, deque)
        """,
            (),
            id="requires_excludes_the_standard_library",
        ),
        pytest.param(
            """\
        from . import utils
        from .models import Net

        def entry():
            return (utils, Net)
        """,
            (),
            id="requires_excludes_relative_imports",
        ),
        pytest.param(
            """\
        def entry(path):
            import yaml
            return yaml.safe_load(path)
        """,
            ("yaml",),
            id="requires_counts_imports_inside_the_entry",
        ),
        pytest.param(
            """\
        import torch

        def entry():
            return 0
        """,
            (),
            id="requires_ignores_imports_that_are_not_dependencies",
        ),
    ],
)
def test_requires(source: str, requires: tuple[str, ...]) -> None:
    assert harvest(source).requires == requires


def test_requires_excludes_future_imports() -> None:
    assert requires_of("from __future__ import annotations\nimport yaml\n") == ("yaml",)


def test_requires_of_the_code_agrees_with_the_rebuilt_module() -> None:
    result = harvest("""\
        import os
        import requests

        def fetch(url):
            import bs4
            return bs4.BeautifulSoup(requests.get(url).text, 'html.parser')

        def entry():
            return fetch(os.environ['URL'])
        """)

    assert result.requires == ("bs4", "requests")
    assert requires_of(result.code) == result.requires


def test_requires_of_code_that_does_not_parse_is_empty() -> None:
    assert requires_of("import numpy\ndef (:\n") == ()


@pytest.mark.parametrize(
    ("source", "code"),
    [
        pytest.param(
            "TABLE = {}\nkey = 'k'\nTABLE[key] = 1\n\ndef entry():\n    return key\n",
            "key = 'k'\n\ndef entry():\n    return key\n",
            id="subscript_assignment_binds_no_name",
        ),
        pytest.param(
            "import logging\nlog = logging.getLogger()\nlog.level = 10\n\ndef entry():\n    return log\n",
            "import logging\n\nlog = logging.getLogger()\n\ndef entry():\n    return log\n",
            id="attribute_assignment_binds_no_name",
        ),
    ],
)
def test_what_an_assignment_binds(source: str, code: str) -> None:
    assert harvest(source).code == code
