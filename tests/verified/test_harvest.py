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


def test_imports_form_one_block_in_file_order_before_other_dependencies() -> None:
    result = harvest("""\
        import sys
        LIMIT = 3
        import json

        def entry():
            return json.dumps([sys.argv, LIMIT])
        """)

    assert result.code == dedent("""\
        import sys
        import json

        LIMIT = 3

        def entry():
            return json.dumps([sys.argv, LIMIT])
        """)


def test_import_is_rendered_whole_even_when_only_one_name_is_used() -> None:
    result = harvest("""\
        from os import path, sep

        def entry():
            return path.join('a', 'b')
        """)

    assert result.code == "from os import path, sep\n\ndef entry():\n    return path.join('a', 'b')\n"


def test_identical_import_lines_are_kept_once() -> None:
    result = harvest("""\
        import os
        import sys
        import  os

        def entry():
            return os.sep + sys.platform
        """)

    assert result.code == "import os\nimport sys\n\ndef entry():\n    return os.sep + sys.platform\n"


def test_different_imports_of_the_same_name_are_all_kept() -> None:
    result = harvest("""\
        import os
        import os.path

        def entry():
            return os.getcwd()
        """)

    assert result.code == "import os\nimport os.path\n\ndef entry():\n    return os.getcwd()\n"


def test_unused_import_is_not_included() -> None:
    result = harvest("""\
        import os
        import sys

        def entry():
            return sys.argv
        """)

    assert result.code == "import sys\n\ndef entry():\n    return sys.argv\n"


# What an import binds


def test_import_of_a_dotted_module_binds_its_first_component() -> None:
    result = harvest("""\
        import os.path

        def entry():
            return os.getcwd()
        """)

    assert result.code == "import os.path\n\ndef entry():\n    return os.getcwd()\n"


def test_import_of_a_dotted_module_as_an_alias_binds_the_alias() -> None:
    result = harvest("""\
        import os.path as osp

        def entry():
            return osp.join('a', 'b')
        """)

    assert result.code == "import os.path as osp\n\ndef entry():\n    return osp.join('a', 'b')\n"


def test_import_of_a_dotted_module_as_an_alias_does_not_bind_its_first_component() -> None:
    result = harvest("""\
        import os.path as osp

        def entry():
            return os.sep
        """)

    assert result.code == "def entry():\n    return os.sep\n"


def test_from_import_as_an_alias_binds_the_alias() -> None:
    result = harvest("""\
        from collections import OrderedDict as Ordered

        def entry():
            return Ordered()
        """)

    assert result.code == "from collections import OrderedDict as Ordered\n\ndef entry():\n    return Ordered()\n"


def test_from_import_as_an_alias_does_not_bind_the_original_name() -> None:
    result = harvest("""\
        from collections import OrderedDict as Ordered

        def entry():
            return OrderedDict()
        """)

    assert result.code == "def entry():\n    return OrderedDict()\n"


# Transitive dependencies


def test_dependencies_are_followed_through_functions() -> None:
    result = harvest("""\
        import math

        def square(x):
            return x * x

        def hypotenuse(a, b):
            return math.sqrt(square(a) + square(b))

        def unused():
            return 0

        def entry():
            return hypotenuse(3, 4)
        """)

    assert result.code == dedent("""\
        import math

        def square(x):
            return x * x

        def hypotenuse(a, b):
            return math.sqrt(square(a) + square(b))

        def entry():
            return hypotenuse(3, 4)
        """)


def test_dependencies_are_followed_through_a_class_methods() -> None:
    result = harvest("""\
        SCALE = 2

        class Scaler:

            def apply(self, value):
                return value * SCALE

        def entry():
            return Scaler().apply(1)
        """)

    assert result.code == dedent("""\
        SCALE = 2

        class Scaler:

            def apply(self, value):
                return value * SCALE

        def entry():
            return Scaler().apply(1)
        """)


def test_dependencies_are_followed_through_a_class_bases() -> None:
    result = harvest("""\
        class Base:
            pass

        class Child(Base):
            pass

        def entry():
            return Child()
        """)

    assert result.code == "class Base:\n    pass\n\nclass Child(Base):\n    pass\n\ndef entry():\n    return Child()\n"


def test_dependencies_are_followed_through_every_name_an_assignment_reads() -> None:
    result = harvest("""\
        A = 1
        OFFSET = 10
        UNUSED = 5

        def shift(x):
            return x + OFFSET
        B = shift(A) + 1

        def entry():
            return B
        """)

    assert result.code == dedent("""\
        A = 1

        OFFSET = 10

        def shift(x):
            return x + OFFSET

        B = shift(A) + 1

        def entry():
            return B
        """)


def test_annotated_assignment_binds_its_target_and_reads_its_annotation() -> None:
    result = harvest("""\
        Number = float
        LIMIT: Number = 3

        def entry():
            return LIMIT
        """)

    assert result.code == "Number = float\n\nLIMIT: Number = 3\n\ndef entry():\n    return LIMIT\n"


def test_every_top_level_statement_binding_a_name_is_included() -> None:
    result = harvest("""\
        MODE = 'fast'
        OTHER = 1
        MODE = 'slow'

        def entry():
            return MODE
        """)

    assert result.code == "MODE = 'fast'\n\nMODE = 'slow'\n\ndef entry():\n    return MODE\n"


def test_assignment_to_several_targets_binds_each_of_them() -> None:
    result = harvest("""\
        low, high = (0, 9)

        def entry():
            return high
        """)

    assert result.code == "low, high = (0, 9)\n\ndef entry():\n    return high\n"


# Names read outside the body


def test_name_used_only_in_an_annotation_is_a_dependency() -> None:
    result = harvest("""\
        from numbers import Number

        def entry(x: Number):
            return x
        """)

    assert result.code == "from numbers import Number\n\ndef entry(x: Number):\n    return x\n"


def test_name_used_only_in_the_return_annotation_is_a_dependency() -> None:
    result = harvest("""\
        Result = int

        def entry() -> Result:
            return 0
        """)

    assert result.code == "Result = int\n\ndef entry() -> Result:\n    return 0\n"


def test_name_used_only_in_a_decorator_is_a_dependency() -> None:
    result = harvest("""\
        import functools

        @functools.cache
        def entry(n):
            return n
        """)

    assert result.code == "import functools\n\n@functools.cache\ndef entry(n):\n    return n\n"


def test_name_used_only_in_a_default_value_is_a_dependency() -> None:
    result = harvest("""\
        DEFAULT = 3

        def entry(n=DEFAULT):
            return n
        """)

    assert result.code == "DEFAULT = 3\n\ndef entry(n=DEFAULT):\n    return n\n"


# Names the entry binds itself are not dependencies


def test_name_assigned_in_the_entry_is_not_a_dependency() -> None:
    result = harvest("""\
        total = 100

        def entry(items):
            total = sum(items)
            return total
        """)

    assert result.code == "def entry(items):\n    total = sum(items)\n    return total\n"


def test_name_deleted_in_the_entry_is_not_a_dependency() -> None:
    # `del` makes the name local to the function, as an assignment would.
    result = harvest("""\
        scratch = 1

        def entry():
            if scratch:
                del scratch
        """)

    assert result.code == "def entry():\n    if scratch:\n        del scratch\n"


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


def test_nested_function_is_not_a_dependency() -> None:
    result = harvest("""\
        def helper():
            return 1

        def entry():

            def helper():
                return 2
            return helper()
        """)

    assert result.code == "def entry():\n\n    def helper():\n        return 2\n    return helper()\n"


def test_nested_class_is_not_a_dependency() -> None:
    result = harvest("""\
        class Box:
            pass

        def entry():

            class Box:
                pass
            return Box()
        """)

    assert result.code == "def entry():\n\n    class Box:\n        pass\n    return Box()\n"


def test_name_imported_inside_the_entry_is_not_a_dependency() -> None:
    result = harvest("""\
        import json

        def entry(text):
            import json
            return json.loads(text)
        """)

    assert result.code == "def entry(text):\n    import json\n    return json.loads(text)\n"


def test_dotted_module_imported_inside_the_entry_binds_its_first_component() -> None:
    result = harvest("""\
        import os

        def entry():
            import os.path
            return os.getcwd()
        """)

    assert result.code == "def entry():\n    import os.path\n    return os.getcwd()\n"


# Order, recursion, cycles


def test_dependencies_come_in_file_order_and_the_entry_last() -> None:
    result = harvest("""\
        EARLY = 0

        def entry():
            return later() + LATE + EARLY

        def later():
            return 1
        LATE = 2
        """)

    assert result.code == dedent("""\
        EARLY = 0

        def later():
            return 1

        LATE = 2

        def entry():
            return later() + LATE + EARLY
        """)


def test_recursive_entry_is_not_its_own_dependency() -> None:
    result = harvest("""\
        def entry(n):
            return 1 if n == 0 else n * entry(n - 1)
        """)

    assert result.code == "def entry(n):\n    return 1 if n == 0 else n * entry(n - 1)\n"


def test_helper_calling_back_into_the_entry_does_not_repeat_the_entry() -> None:
    result = harvest("""\
        def entry(n):
            return step(n)

        def step(n):
            return entry(n - 1) if n else 0
        """)

    assert result.code == "def step(n):\n    return entry(n - 1) if n else 0\n\ndef entry(n):\n    return step(n)\n"


def test_cycle_between_two_helpers_includes_each_once() -> None:
    result = harvest("""\
        def ping(n):
            return pong(n - 1) if n else 'ping'

        def pong(n):
            return ping(n - 1) if n else 'pong'

        def entry():
            return ping(3)
        """)

    assert result.code == dedent("""\
        def ping(n):
            return pong(n - 1) if n else 'ping'

        def pong(n):
            return ping(n - 1) if n else 'pong'

        def entry():
            return ping(3)
        """)


def test_async_entry_and_async_dependency_are_rebuilt() -> None:
    result = harvest("""\
        async def fetch():
            return 1

        async def entry():
            return await fetch()
        """)

    assert result.code == "async def fetch():\n    return 1\n\nasync def entry():\n    return await fetch()\n"


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


def test_requires_lists_third_party_top_level_modules_sorted_and_once() -> None:
    result = harvest("""\
        import torch
        import numpy as np
        from scipy.linalg import inv
        import numpy.linalg

        def entry():
            return (torch, np, inv, numpy)
        """)

    assert result.requires == ("numpy", "scipy", "torch")


def test_requires_excludes_the_standard_library() -> None:
    result = harvest("""\
        import os.path
        import json
        from collections import deque

        def entry():
            return (os, json, deque)
        """)

    assert result.requires == ()


def test_requires_excludes_relative_imports() -> None:
    result = harvest("""\
        from . import utils
        from .models import Net

        def entry():
            return (utils, Net)
        """)

    assert result.requires == ()


def test_requires_excludes_future_imports() -> None:
    assert requires_of("from __future__ import annotations\nimport yaml\n") == ("yaml",)


def test_requires_counts_imports_inside_the_entry() -> None:
    result = harvest("""\
        def entry(path):
            import yaml
            return yaml.safe_load(path)
        """)

    assert result.requires == ("yaml",)


def test_requires_ignores_imports_that_are_not_dependencies() -> None:
    result = harvest("""\
        import torch

        def entry():
            return 0
        """)

    assert result.requires == ()


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


def test_subscript_assignment_binds_no_name() -> None:
    result = harvest("TABLE = {}\nkey = 'k'\nTABLE[key] = 1\n\ndef entry():\n    return key\n")
    assert result.code == "key = 'k'\n\ndef entry():\n    return key\n"


def test_attribute_assignment_binds_no_name() -> None:
    result = harvest("import logging\nlog = logging.getLogger()\nlog.level = 10\n\ndef entry():\n    return log\n")
    assert result.code == "import logging\n\nlog = logging.getLogger()\n\ndef entry():\n    return log\n"
