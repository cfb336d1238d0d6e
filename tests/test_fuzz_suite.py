"""Fuzzing suite files: whatever a suite file holds, loading it gives one line naming the file
(SuiteError or InputError), never a traceback. Every built-in suite is the seed."""

from __future__ import annotations

import copy
import json
import math
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.errors import InputError, SuiteError
from ssdlab.suite import BUILTIN_DIR, load_suite

SEEDS = {p.stem: tomllib.loads(p.read_text()) for p in sorted(BUILTIN_DIR.glob("*.toml"))}
ODD: list[Any] = [
    -1, 0, 2**64, "x", "@nope", "75%", "200%", "", "a\nb", [], {}, [1], [[1]], {"a": 1}, True,
    1.5, float("inf"), None,
]  # fmt: skip
UNKNOWN_KEYS = ["zz_unknown", "exec_prerun", "rounds", "steps", "options", "include", "exclude"]
FUZZ = settings(max_examples=150, deadline=None, derandomize=True)

Path_ = tuple[str | int, ...]


def _paths(value: Any, at: Path_ = ()) -> list[Path_]:
    """Every place below ``value``: keys of its tables and indices of its lists."""
    if not isinstance(value, dict | list):
        return []
    out: list[Path_] = []
    for key, child in value.items() if isinstance(value, dict) else enumerate(value):
        out.append((*at, key))
        out += _paths(child, (*at, key))
    return out


def _at(data: Any, path: Path_) -> Any:
    for key in path:
        data = data[key]
    return data


def _mutate(data: dict[str, Any], draw: st.DrawFn) -> None:
    """One random change: replace a value with an odd one, delete a key, or add a key."""
    kind = draw(st.sampled_from(["replace", "delete", "add"]))
    paths = _paths(data)
    if kind == "add":
        tables = [p for p in [(), *paths] if isinstance(_at(data, p), dict)]
        table = _at(data, draw(st.sampled_from(tables)))
        table[draw(st.sampled_from(UNKNOWN_KEYS))] = copy.deepcopy(draw(st.sampled_from(ODD)))
        return
    path = draw(st.sampled_from(paths))
    parent = _at(data, path[:-1])
    if kind == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(ODD)))


def _toml_value(value: Any) -> str:
    """``value`` as an inline TOML value; TypeError when TOML cannot hold it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return json.dumps(value)
    if isinstance(value, float):
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml_value, value)) + "]"
    if isinstance(value, dict):
        items = (f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + ", ".join(items) + " }"
    raise TypeError(f"TOML holds no {type(value).__name__}")


def _toml(data: dict[str, Any]) -> str | None:
    """``data`` as a TOML document, or None when TOML cannot hold it as it is."""
    try:
        text = "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in data.items())
        return text if tomllib.loads(text) == data else None
    except (TypeError, tomllib.TOMLDecodeError):
        return None


def _loads_or_refuses(path: Path) -> None:
    """Loading ``path`` succeeds or fails with one line naming it."""
    try:
        load_suite(path)
    except (SuiteError, InputError) as exc:
        assert str(path) in str(exc) and "\n" not in str(exc), str(exc)


def _check(texts: dict[str, str | bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in texts.items():
            path = Path(tmp) / name
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text)
            _loads_or_refuses(path)


@FUZZ
@given(st.sampled_from(sorted(SEEDS)), st.integers(1, 3), st.data())
def test_mutated_suites_load_or_give_one_line(seed: str, changes: int, data: st.DataObject) -> None:
    suite = copy.deepcopy(SEEDS[seed])
    for _ in range(changes):
        _mutate(suite, data.draw)
    texts: dict[str, str | bytes] = {"s.yaml": yaml.safe_dump(suite)}
    if (toml := _toml(suite)) is not None:
        texts["s.toml"] = toml
    _check(texts)


@FUZZ
@given(st.sampled_from(sorted(SEEDS)), st.sampled_from(["toml", "yaml"]), st.data())
def test_damaged_suite_bytes_load_or_give_one_line(
    seed: str, kind: str, data: st.DataObject
) -> None:
    text = (BUILTIN_DIR / f"{seed}.toml").read_text() if kind == "toml" else None
    raw = bytearray((text or yaml.safe_dump(SEEDS[seed])).encode())
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] ^= data.draw(st.integers(1, 255))
    if data.draw(st.booleans()):
        del raw[data.draw(st.integers(1, len(raw))) :]
    _check({f"s.{kind}": bytes(raw)})
