#!/usr/bin/env python3
"""Write python/ebm/_options.py and docs/options.md from the C option tables.

The sampler's and the estimator's options are data in the library: one
table of ebm__option rows per handle (src/sampler.c, src/estimator.c;
src/options.h says what a row holds), which drives setting, range checks
and messages. This tool reads those tables, and the options' documentation
comments in include/ebm.h, and writes

  python/ebm/_options.py   the binding's option metadata (names, kinds,
                           ranges, defaults), and
  docs/options.md          the listing of every option.

Run it after changing a table or an option's comment in the header:

    python3 python/tools/gen_options.py            # rewrite both files
    python3 python/tools/gen_options.py --check    # exit 1 if one is out of date

python/tests/test_options.py checks the result against the library.
"""
import argparse
import os
import re
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen_abi  # noqa: E402  (the header's enums, parsed one way for both tools)

HEADER = os.path.join(REPO, "include", "ebm.h")
TABLES = (  # (handle, source, table, option enum, prefix of the C names)
    ("sampler", os.path.join("src", "sampler.c"), "sampler_option_rows",
     "ebm_sampler_option", "EBM_SAMPLER_"),
    ("estimator", os.path.join("src", "estimator.c"), "estimator_option_rows",
     "ebm_estimator_option", "EBM_ESTIMATOR_"),
)
OUTPUT = os.path.join(REPO, "python", "ebm", "_options.py")
LISTING = os.path.join(REPO, "docs", "options.md")
KINDS = {"EBM__OPTION_INT": "int", "EBM__OPTION_FLAG": "flag", "EBM__OPTION_ENUM": "enum",
         "EBM__OPTION_MASK": "mask", "EBM__OPTION_DOUBLE": "double"}
LIMITS = {"INT32_MAX": 2**31 - 1, "UINT32_MAX": 2**32 - 1, "INT64_MAX": 2**63 - 1}


# ---------------------------------------------------------------------------
# Reading C


def strip_comments(text):
    """Comments out, string literals kept (a '/*' inside a string stays)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
            out.append(" ")
        elif text.startswith("//", i):
            i = text.index("\n", i)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def split_top(text, sep=","):
    """text split at `sep` outside strings, parentheses and braces."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def value(expr, env):
    """A table value: a string (adjacent literals joined), a number, or a name."""
    expr = expr.strip()
    if expr.startswith('"'):
        return "".join(bytes(s, "utf-8").decode("unicode_escape")
                       for s in re.findall(r'"((?:[^"\\]|\\.)*)"', expr))
    if re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", expr):
        return float(expr) if re.search(r"[.e]", expr) else int(expr)
    if expr in env:
        return env[expr]
    if re.fullmatch(r"\w+", expr):
        return expr  # a function (hook) or a kind
    raise ValueError("cannot read table value %r" % expr)


def read_table(path, table, env):
    """[(C name of the index, {field: value})] of the table's designated rows."""
    with open(path) as f:
        text = strip_comments(f.read())
    env = dict(env)
    for name, expr in re.findall(r"^#define\s+(EBM__\w+)\s+(-?\d+)\s*$", text, flags=re.M):
        env[name] = int(expr)
    m = re.search(r"\bebm__option\s+%s\[\]\s*=\s*\{(.*?)\n\};" % table, text, flags=re.S)
    if m is None:
        raise ValueError("%s: no table %s" % (path, table))
    rows = []
    for item in split_top(m.group(1)):
        d = re.fullmatch(r"\[(\w+)\]\s*=\s*\{(.*)\}", item, flags=re.S)
        if d is None:
            raise ValueError("%s: row %r is not [OPTION] = {...}" % (path, item[:40]))
        fields = {}
        for part in split_top(d.group(2)):
            f = re.fullmatch(r"(?:FIELD|SETTING)\((\w+),\s*(\w+)\)", part)
            if f is not None:
                fields["field"], fields["type"] = f.group(1), f.group(2).lower()
                continue
            key, _, expr = part.partition("=")
            fields[key.strip().lstrip(".")] = value(expr, env)
        rows.append((d.group(1), fields))
    return rows


def member_docs(header_text, tag):
    """{member: its documentation comment as one paragraph} of enum `tag`."""
    m = re.search(r"\benum\s+%s\s*\{(.*?)\}\s*;" % tag, header_text, flags=re.S)
    docs = {}
    for doc, name in re.findall(r"/\*\*(.*?)\*/\s*(EBM_\w+)\s*=", m.group(1), flags=re.S):
        lines = [re.sub(r"^\s*\*\s?", "", line) for line in doc.strip().splitlines()]
        docs[name] = " ".join(" ".join(lines).split())
    return docs


# ---------------------------------------------------------------------------
# The options


def range_text(o):
    """The range in words, as ebm__option_range_text writes it."""
    if o.get("range") is not None:
        return o["range"]
    if o["kind"] == "double":
        text = "finite and %s %g" % (">" if o.get("open") else ">=", o["lo"])
        return text + (" and < %g" % o["hi"] if o.get("hi") is not None else "")
    if o["kind"] == "flag":
        return "0 or 1"
    if o["hi"] == LIMITS["INT64_MAX"]:
        return "%d or more" % o["lo"]
    return "%d to %d" % (o["lo"], o["hi"])


def options(header_text):
    """{handle: [option as a dict]} from the tables, in option order."""
    body = gen_abi.strip_comments(header_text)
    env = dict(LIMITS)
    for _, members in gen_abi.enums(body):
        env.update(members)
    out = {}
    for handle, source, table, tag, prefix in TABLES:
        docs = member_docs(header_text, tag)
        rows = []
        for index, f in read_table(os.path.join(REPO, source), table, env):
            if f.get("name") != index:
                raise ValueError("%s: row [%s] is named %r" % (source, index, f.get("name")))
            o = {
                "name": index[len(prefix):].lower(), "c_name": index, "code": env[index],
                "kind": KINDS[f["kind"]], "type": f["type"], "lo": f.get("lo", 0),
                "hi": f.get("hi"), "open": bool(f.get("open", 0)), "range": f.get("range"),
                "values": f.get("values"), "default": f.get("initial", 0),
                "default_text": f.get("initial_text"), "hook": f.get("hook"),
                "doc": docs.get(index, ""),
            }
            if o["kind"] == "double":  # hi: the upper bound (exclusive) if `below`, else none
                o["hi"] = float(o["hi"]) if f.get("below") else None
                o["default"] = float(o["default"])
            if o["values"] is not None:  # the default and the choices by their names
                members = dict(gen_abi.enums(body))[o["values"]]
                o["default_name"] = next(n for n, v in members if v == o["default"])
                o["member_names"] = {v: n for n, v in members}
            o["choices"] = None
            if o["kind"] == "enum":  # the values the range names, else all from lo to hi
                o["choices"] = (tuple(int(v) for v in re.findall(r"\((\d+)\)", o["range"]))
                                if o["range"] is not None else tuple(range(o["lo"], o["hi"] + 1)))
            o["range"] = range_text(o)
            rows.append(o)
        out[handle] = rows
    return out


# ---------------------------------------------------------------------------
# Writing


FIELDS = ("name", "c_name", "code", "kind", "lo", "hi", "open", "range", "choices", "values",
          "default", "default_text", "hook")


def render_module(opts, header_text):
    """The text of python/ebm/_options.py."""
    body = gen_abi.strip_comments(header_text)
    base = dict(m for _, ms in gen_abi.enums(body) for m in ms)["EBM_ESTIMATOR_SAMPLER_OPTION"]
    lines = [
        '"""Generated by python/tools/gen_options.py from the option tables of src/sampler.c and',
        'src/estimator.c: do not edit.',
        "",
        "Each option: name (the Python keyword), c_name, code (the C option number), kind",
        '("int", "flag", "enum", "mask" or "double"), lo and hi (the accepted integers; for',
        '"double" lo is the bound, open True for > lo, False for >= lo, hi None or the bound',
        'it stays below), range (the accepted values in the library\'s words), choices (an',
        '"enum" option\'s accepted values), values',
        "(its header enum's tag), default (default_text, when not None, says how the",
        "handle's kind or model sets it) and hook (not None: the library checks the value",
        "further, against the model or the estimator's kind).",
        '"""',
        "from collections import namedtuple",
        "",
        'Option = namedtuple("Option", (',
    ] + textwrap.wrap(", ".join(repr(k) for k in FIELDS) + ",", 96, initial_indent="    ",
                      subsequent_indent="    ") + [
        "))",
        "",
        "# EBM_ESTIMATOR_SAMPLER_OPTION: an estimator sets sampler option o as this + o.",
        "SAMPLER_OPTION_BASE = %d" % base,
    ]
    for handle, rows in opts.items():
        lines += ["", "%s_OPTIONS = (" % handle.upper()]
        for o in rows:  # one field a line: a changed range is a one-line diff
            lines += ["    Option("] + ["        %s=%r," % (k, o[k]) for k in FIELDS] + ["    ),"]
        lines.append(")")
    lines.append("")
    return "\n".join(lines)


def cell(text):
    """text for a Markdown table cell."""
    return str(text).replace("|", "\\|")


def takes(o):
    """o's range for the listing: an enum's numbers with their names."""
    if o["kind"] != "enum" or not o["range"][0].isdigit():
        return o["range"]
    return "%s (%s)" % (o["range"], ", ".join("%s = %d" % (o["member_names"][v], v)
                                             for v in o["choices"]))


def render_listing(opts):
    """The text of docs/options.md."""
    lines = [
        "# Options",
        "",
        "<!-- Generated by python/tools/gen_options.py from the option tables of src/sampler.c",
        "     and src/estimator.c and the comments of include/ebm.h: do not edit. -->",
        "",
        "Every option of a sampler (`ebm_sampler_set_int`, `ebm_sampler_set_double`) and of an",
        "estimator (`ebm_estimator_set_int`, `ebm_estimator_set_double`; an estimator also takes",
        "sampler option o as `EBM_ESTIMATOR_SAMPLER_OPTION + o`, which goes to its samplers,",
        "except `EBM_SAMPLER_CLAMP_LAYERS` and `EBM_SAMPLER_ROW_OFFSET`). The library checks",
        "a value against the range below; options marked * are checked further against the",
        "model or the estimator's kind. A refused value changes nothing and leaves a message",
        "that names the option, the value and the range. In Python the option is the keyword",
        "in the second column (`ebm.Sampler(model, coupling=\"crn\")`).",
    ]
    for handle, rows in opts.items():
        lines += ["", "## %s options" % handle.capitalize(), "",
                  "| option | Python | type | takes | default |", "|---|---|---|---|---|"]
        for o in rows:
            default = o["default_text"] or o.get("default_name") or str(o["default"])
            lines.append("| `%s` (%d) | `%s` | %s | %s%s | %s |" % (
                o["c_name"], o["code"], o["name"],
                o["kind"] + (" (`enum %s`)" % o["values"] if o["values"] else ""),
                cell(takes(o)), " *" if o["hook"] else "", cell(default)))
        lines.append("")
        for o in rows:
            lines += ["- `%s`: %s" % (o["c_name"], o["doc"])]
    lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if an output is out of date")
    ap.add_argument("--output", default=OUTPUT, help="the module (default: %(default)s)")
    ap.add_argument("--listing", default=LISTING, help="the listing (default: %(default)s)")
    args = ap.parse_args()
    with open(HEADER) as f:
        header_text = f.read()
    opts = options(header_text)
    outputs = ((args.output, render_module(opts, header_text)),
               (args.listing, render_listing(opts)))
    stale = 0
    for path, text in outputs:
        if args.check:
            try:
                with open(path) as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                print("%s is out of date: run python3 python/tools/gen_options.py" % path)
                stale = 1
            continue
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return stale


if __name__ == "__main__":
    sys.exit(main())
