"""The Grafana dashboard (docs/grafana/groupctl.json) is importable and queries only what
docs/metrics.md documents; that page is checked against the exporter by
tests/server/test_metrics_collector.py, so the dashboard is chained to the code.

Invariants pinned:
- Structure: a uid, the title "groupctl", a `datasource` variable of type prometheus; every panel
  (rows included) has a unique id, a title and a place on the 24-column grid, no two overlap; every
  panel but a row queries through `${datasource}` with at least one target whose expr is non-empty.
- Names: every series a query selects is a documented metric: a counter by its `_total` name, a
  histogram only through its `_bucket`, `_sum` or `_count` series.
- Labels: every label a selector matches on, and every label of a `by (...)`/`without (...)` around
  it, is one the docs give the metric (or `le` on a `_bucket` series, or `instance`/`job`, the
  target labels Prometheus adds to every scraped series). Template variables' `label_values(...)`
  are held to the same rule.
- Functions: counters and histogram series are read only through rate/increase/irate, gauges never;
  a `_bucket` series reaches a histogram_quantile with `le` kept by every aggregation between.

The query reader below understands the PromQL the dashboard uses (selectors, matchers, function
calls, aggregations with `by`/`without` before or after their argument, arithmetic, `bool`); on
anything else (vector matching with `on`/`ignoring`/`group_*`, a selector without a metric name,
characters it does not know) it fails loudly rather than skip, so a new panel cannot slip past it.
It does not track which labels an inner aggregation drops: an outer `by` is only checked against
the metrics' documented labels.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = json.loads((ROOT / "docs" / "grafana" / "groupctl.json").read_text())
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
TARGET_LABELS = {"instance", "job"}
RATES = {"rate", "increase", "irate"}
AGGREGATIONS = {"sum", "min", "max", "avg", "count", "group", "stddev", "stdvar", "topk", "bottomk",
                "quantile", "count_values"}
HISTOGRAM_SERIES = ("_bucket", "_sum", "_count")

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<range>\[[^\]]*\])
  | (?P<variable>\$\{[^}]*\}|\$\w+)
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_:][\w:]*)
  | (?P<op>=~|!~|!=|==|>=|<=|[-+*/%^<>=(){},])
""", re.X)


def documented_metrics() -> dict[str, tuple[str, set[str]]]:
    """name -> (type, labels) for every metric row of every table in docs/metrics.md."""
    text = (ROOT / "docs" / "metrics.md").read_text()
    rows = re.findall(r"^\| `(groupctl_\w+)` \| (\w+) \|([^|]*)\|", text, flags=re.M)
    return {name: (kind, set(re.findall(r"`(\w+)`", labels))) for name, kind, labels in rows}


@dataclass
class Call:
    """A parenthesised argument: the function or aggregation it belongs to (None for plain
    grouping) and, for an aggregation, its `by`/`without` labels."""
    name: str | None
    grouping: str | None = None  # "by" or "without"
    labels: tuple[str, ...] = ()


@dataclass
class Selector:
    metric: str
    matchers: tuple[str, ...]
    calls: list[Call] = field(default_factory=list)  # enclosing, outermost first


def tokens(expr: str) -> list[tuple[str, str]]:
    found, at = [], 0
    while at < len(expr):
        match = TOKEN.match(expr, at)
        if match is None:
            raise ValueError(f"cannot read {expr[at:]!r} in {expr!r}")
        if match.lastgroup != "space":
            found.append((match.lastgroup, match.group()))
        at = match.end()
    return found


def read(expr: str) -> list[Selector]:
    """Every series selector of a PromQL expression with its matchers' labels and its calls."""
    toks = tokens(expr)
    selectors: list[Selector] = []
    stack: list[Call] = []
    pending: Call | None = None  # a function or aggregation name waiting for its "("
    closed: Call | None = None  # the call whose ")" was the previous token

    def label_list(at: int, opening: str, closing: str) -> tuple[list[list[str]], int]:
        assert toks[at][1] == opening, f"expected {opening!r} at {toks[at:]} in {expr!r}"
        items, item, at = [], [], at + 1
        while toks[at][1] != closing:
            if toks[at][1] == ",":
                items.append(item)
                item = []
            else:
                item.append(toks[at][1])
            at += 1
        return [*items, item] if item else items, at + 1

    at = 0
    while at < len(toks):
        kind, text = toks[at]
        following = toks[at + 1][1] if at + 1 < len(toks) else None
        just_closed, closed = closed, None
        if kind == "ident" and text in ("by", "without"):
            items, at = label_list(at + 1, "(", ")")
            owner = pending if pending is not None else just_closed
            assert owner is not None and owner.name in AGGREGATIONS, f"{text} without an aggregation in {expr!r}"
            owner.grouping, owner.labels = text, tuple(label for (label,) in items)
            continue
        if kind == "ident" and text in ("on", "ignoring", "group_left", "group_right"):
            raise ValueError(f"vector matching ({text}) is not understood by this reader: {expr!r}")
        if text == "{":
            raise ValueError(f"a selector without a metric name is not understood by this reader: {expr!r}")
        if kind == "ident" and text in ("bool", "and", "or", "unless"):
            pass
        elif kind == "ident" and (following == "(" or (text in AGGREGATIONS and following in ("by", "without"))):
            pending = Call(text)
        elif kind == "ident":
            matchers: list[str] = []
            if following == "{":
                items, after = label_list(at + 1, "{", "}")
                for item in items:
                    assert len(item) == 3 and item[1] in ("=", "!=", "=~", "!~"), f"matcher {item} in {expr!r}"
                    matchers.append(item[0])
                at = after - 1
            selectors.append(Selector(text, tuple(matchers), list(stack)))
        elif text == "(":
            stack.append(pending if pending is not None else Call(None))
            pending = None
        elif text == ")":
            closed = stack.pop()
        at += 1
    assert not stack and pending is None, f"unbalanced {expr!r}"
    return selectors


def panels() -> list[dict]:
    found = []
    for panel in DASHBOARD["panels"]:
        found.append(panel)
        found.extend(panel.get("panels", []))  # a collapsed row keeps its panels inside it
    return found


def queries() -> list[tuple[str, str]]:
    """(where, expr) for every panel target and every query variable; `label_values(S, l)` is
    read as `max by (l) (S)`, which names the same metric and labels."""
    found = [(f"panel {panel['title']!r}", target["expr"])
             for panel in panels() if panel["type"] != "row" for target in panel["targets"]]
    for variable in DASHBOARD["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            query = query["query"] if isinstance(query, dict) else query  # the form Grafana saves after a UI edit
            match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query)
            assert match, f"variable {variable['name']}: {query!r} is not label_values(selector, label)"
            found.append((f"variable {variable['name']!r}", f"max by ({match[2]}) ({match[1]})"))
    return found


def resolved(metric: str, docs: dict[str, tuple[str, set[str]]]) -> tuple[str, str, set[str]] | None:
    """(documented name, its type, the labels a selector of `metric` may use), or None when the
    series is not one the docs give: a histogram's bare name is not a series."""
    if metric in docs and docs[metric][0] != "histogram":
        return metric, *docs[metric]
    for suffix in HISTOGRAM_SERIES:
        base = metric.removesuffix(suffix)
        if base != metric and docs.get(base, ("",))[0] == "histogram":
            kind, labels = docs[base]
            return base, kind, labels | ({"le"} if suffix == "_bucket" else set())
    return None


def test_the_query_reader_finds_selectors_matchers_and_groupings_before_or_after_the_argument():
    selectors = read('histogram_quantile(0.99, sum by (le, api) (rate(a_bucket{instance=~"$x", api!="Heartbeat"}'
                     '[$__rate_interval]))) / max(b) without (job) + time() - c != bool 1')
    assert [(s.metric, s.matchers) for s in selectors] == [("a_bucket", ("instance", "api")), ("b", ()), ("c", ())]
    assert [(call.name, call.grouping, call.labels) for call in selectors[0].calls] == [
        ("histogram_quantile", None, ()), ("sum", "by", ("le", "api")), ("rate", None, ())]
    assert [(call.name, call.grouping, call.labels) for call in selectors[1].calls] == [("max", "without", ("job",))]
    with pytest.raises(ValueError):
        read("a / on (group) b")
    with pytest.raises(ValueError):
        read('{__name__="a"}')


def test_the_dashboard_is_importable_with_a_prometheus_datasource_variable():
    assert DASHBOARD["uid"] and DASHBOARD["title"] == "groupctl"
    assert DASHBOARD["schemaVersion"] >= 36
    variables = {variable["name"]: variable for variable in DASHBOARD["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for variable in variables.values():
        if variable["type"] == "query":
            assert variable["datasource"] == DATASOURCE, variable["name"]


def test_every_panel_has_a_unique_id_a_title_and_its_own_place_on_the_grid():
    ids = [panel["id"] for panel in panels()]
    assert len(ids) == len(set(ids))
    taken: dict[tuple[int, int], str] = {}
    for panel in panels():
        assert panel["title"], panel["id"]
        grid = panel["gridPos"]
        assert grid["w"] > 0 and grid["h"] > 0 and grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                assert (x, y) not in taken, f"{panel['title']!r} overlaps {taken[(x, y)]!r}"
                taken[(x, y)] = panel["title"]


def test_every_panel_queries_through_the_datasource_variable_with_a_non_empty_expression():
    for panel in panels():
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == DATASOURCE, panel["title"]
        assert panel["targets"], panel["title"]
        assert len({target["refId"] for target in panel["targets"]}) == len(panel["targets"]), panel["title"]
        for target in panel["targets"]:
            assert target.get("datasource", DATASOURCE) == DATASOURCE, panel["title"]
            assert target["expr"].strip(), panel["title"]


def test_every_query_selects_only_documented_metrics_by_their_series_names():
    docs = documented_metrics()
    for where, expr in queries():
        selectors = read(expr)
        assert selectors, f"{where}: {expr!r} selects no metric"
        for selector in selectors:
            assert resolved(selector.metric, docs), f"{where}: {selector.metric} is not a series docs/metrics.md gives"


def test_every_label_a_query_matches_or_groups_by_is_one_the_docs_give_its_metric():
    docs = documented_metrics()
    for where, expr in queries():
        for selector in read(expr):
            found = resolved(selector.metric, docs)
            if found is None:
                continue  # an undocumented name: the names test reports it
            _, _, labels = found
            allowed = labels | TARGET_LABELS
            used = set(selector.matchers) | {label for call in selector.calls for label in call.labels}
            assert used <= allowed, f"{where}: {selector.metric} has no label {sorted(used - allowed)}"


def test_counters_and_histograms_are_read_through_rate_and_gauges_never_are():
    docs = documented_metrics()
    for where, expr in queries():
        if where.startswith("variable"):
            continue  # label_values reads series, not values
        for selector in read(expr):
            found = resolved(selector.metric, docs)
            if found is None:
                continue  # an undocumented name: the names test reports it
            _, kind, _ = found
            innermost = selector.calls[-1].name if selector.calls else None
            if kind == "gauge":
                assert innermost not in RATES, f"{where}: {innermost}() over the gauge {selector.metric}"
            else:
                assert innermost in RATES, f"{where}: the {kind} {selector.metric} is read without rate()"


def test_histogram_buckets_reach_histogram_quantile_keeping_le():
    for where, expr in queries():
        for selector in read(expr):
            if not selector.metric.endswith("_bucket"):
                continue
            names = [call.name for call in selector.calls]
            assert "histogram_quantile" in names, f"{where}: {selector.metric} outside histogram_quantile"
            inner = selector.calls[len(names) - names[::-1].index("histogram_quantile"):]
            for call in inner:
                if call.name in AGGREGATIONS:
                    assert call.grouping == "by" and "le" in call.labels, f"{where}: {call.name} drops le"
