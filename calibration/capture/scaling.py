"""Which dimensions of a captured step scale with the micro-batch B and the sequence length S.

Two captures of the same step, at (B1, S1) and (B2, S2), give each dimension twice: d1 and d2. A dimension that
scales is a monomial d = k * B^a * S^b (k a positive integer, a and b small non-negative integers): d2 / d1 =
(B2/B1)^a * (S2/S1)^b identifies (a, b) when the two ratios are powers of different primes (B x3, S x2, say), and
k = d1 / (B1^a * S1^b). A dimension equal in both captures is a constant. Real code also makes dimensions a small
constant off a monomial (transformers' mask code concatenates one position before the sequence: S + 1): where no
monomial fits, d = k * B^a * S^b + c is tried for each (a, b), k = (d2 - d1) / (B2^a S2^b - B1^a S1^b) a positive
integer and c = d1 - k * B1^a * S1^b with |c| <= MAX_OFFSET; the smallest |c| is taken, and a tie is refused as
ambiguous. Anything else is refused with the op, its module and the field that broke the rule.

Written as the op graph format says (docs/ops-format.md): an integer, or a string "k*B^a*S^b" with factors of 1
and exponents of 1 left out ("B", "S", "2*B*S", "B*S^2"), followed by "+c" or "-c" for an offset ("S+1").
Standard library only.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

MAX_EXPONENT = 3
MAX_OFFSET = 16
SYMBOL_ORDER = ("B", "S")


class ScaleError(ValueError):
    """The two captures do not fit the monomial rule, or cannot identify the exponents."""


def check_identifiable(sym1: dict, sym2: dict) -> list[str]:
    """The symbols that changed between the captures; refuses ratios that could confuse two exponent pairs."""
    if set(sym1) != set(sym2):
        raise ScaleError(f"the two captures name different symbols: {sorted(sym1)} and {sorted(sym2)}")
    changed = [s for s in SYMBOL_ORDER if s in sym1 and sym1[s] != sym2[s]]
    if not changed:
        raise ScaleError("the second capture has the same micro-batch and sequence length as the first")
    for s in changed:
        if sym1[s] <= 0 or sym2[s] <= 0:
            raise ScaleError(f"{s} must be positive in both captures (got {sym1[s]} and {sym2[s]})")
    seen = {}
    for exps in itertools.product(range(MAX_EXPONENT + 1), repeat=len(changed)):
        r = Fraction(1)
        for s, e in zip(changed, exps):
            r *= Fraction(sym2[s], sym1[s]) ** e
        if r in seen:
            raise ScaleError(
                "the second capture's ratios cannot tell exponents apart ("
                + ", ".join(f"{s}: {sym1[s]} -> {sym2[s]}" for s in changed)
                + f": {seen[r]} and {exps} give the same ratio); choose B2/B and S2/S as powers of different "
                  "primes, e.g. B x3 and S x2")
        seen[r] = exps
    return changed


def format_monomial(k: int, exps: dict) -> int | str:
    """(2, {'B': 1, 'S': 1}) -> '2*B*S'; no exponent above 0 -> the integer k."""
    if all(exps.get(s, 0) == 0 for s in SYMBOL_ORDER):
        return k
    parts = [] if k == 1 else [str(k)]
    for s in SYMBOL_ORDER:
        e = exps.get(s, 0)
        if e:
            parts.append(s if e == 1 else f"{s}^{e}")
    return "*".join(parts)


# A polynomial in B and S: {(exponent of B, exponent of S): integer coefficient}.
def parse_poly(text: str) -> dict:
    """'8*B*S+8*B' -> {(1, 1): 8, (1, 0): 8}; 'S-1' -> {(0, 1): 1, (0, 0): -1}. ValueError naming the text."""
    poly, term, sign = {}, "", 1
    for ch in text.replace(" ", "") + "+":
        if ch in "+-" and term:
            k, exps = _parse_term(term, text)
            key = (exps.get("B", 0), exps.get("S", 0))
            poly[key] = poly.get(key, 0) + sign * k
            term, sign = "", (1 if ch == "+" else -1)
        elif ch in "+-":
            if term or ch == "+":
                raise ValueError(f"not a polynomial of B and S: {text!r}")
            sign = -sign
        else:
            term += ch
    if not any(key != (0, 0) for key in poly):
        raise ValueError(f"not a polynomial of B and S: {text!r}")
    return {key: v for key, v in poly.items() if v}


def _parse_term(term: str, text: str) -> tuple[int, dict]:
    k, exps = 1, {}
    for tok in term.split("*"):
        if tok.isdigit():
            k *= int(tok)
            continue
        name, _, power = tok.partition("^")
        if name not in SYMBOL_ORDER or (power and not power.isdigit()):
            raise ValueError(f"not a polynomial of B and S: {text!r}")
        exps[name] = exps.get(name, 0) + (int(power) if power else 1)
    return k, exps


def format_poly(poly: dict) -> int | str:
    """The polynomial as the format writes it: terms of higher degree first, the constant last; an integer if
    nothing but the constant is left."""
    terms = sorted(((key, v) for key, v in poly.items() if v), key=lambda kv: (-(kv[0][0] + kv[0][1]), -kv[0][0]))
    if not terms or all(key == (0, 0) for key, _ in terms):
        return sum(v for _, v in terms)
    out = ""
    for key, v in terms:
        body = format_monomial(abs(v), {"B": key[0], "S": key[1]})
        out += ("-" if v < 0 else ("+" if out else "")) + str(body)
    return out


def as_poly(dim) -> dict:
    if isinstance(dim, int) and not isinstance(dim, bool):
        return {(0, 0): dim} if dim else {}
    return parse_poly(dim)


def poly_mul(p: dict, q: dict) -> dict:
    out = {}
    for (a1, b1), v1 in p.items():
        for (a2, b2), v2 in q.items():
            key = (a1 + a2, b1 + b2)
            out[key] = out.get(key, 0) + v1 * v2
    return {k: v for k, v in out.items() if v}


def poly_add(p: dict, q: dict) -> dict:
    out = dict(p)
    for k, v in q.items():
        out[k] = out.get(k, 0) + v
    return {k: v for k, v in out.items() if v}


def evaluate(dim, symbols: dict) -> int:
    """An integer dimension as is; a polynomial string at the given B and S."""
    if isinstance(dim, bool) or isinstance(dim, int):
        return int(dim)
    if isinstance(dim, str):
        total = 0
        for (a, b), v in parse_poly(dim).items():
            if (a and "B" not in symbols) or (b and "S" not in symbols):
                raise ValueError(f"{dim!r} uses a symbol the capture's symbols do not name ({sorted(symbols)})")
            total += v * (symbols["B"] ** a if a else 1) * (symbols["S"] ** b if b else 1)
        return total
    raise ValueError(f"not a dimension: {dim!r}")


ITEMSIZE = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2, "int64": 8, "int32": 4, "int16": 2,
            "int8": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "complex64": 8,
            "complex128": 16}


def extent_bytes(ref: dict) -> dict:
    """A tensor's storage extent in bytes as a polynomial: itemsize * (1 + sum((size - 1) * stride))."""
    numel = {(0, 0): 1}
    for size, stride in zip(ref["shape"], ref["stride"]):
        numel = poly_add(numel, poly_mul(poly_add(as_poly(size), {(0, 0): -1}), as_poly(stride)))
    return poly_mul(numel, {(0, 0): ITEMSIZE[ref["dtype"]]})


def _values(changed, exps, sym):
    v = 1
    for s, e in zip(changed, exps):
        v *= sym[s] ** e
    return v


def _fit_offset(d1, d2, sym1, sym2, changed):
    """k*B^a*S^b + c with the smallest |c| <= MAX_OFFSET, or None; ScaleError if two fits tie."""
    fits = []
    for exps in itertools.product(range(MAX_EXPONENT + 1), repeat=len(changed)):
        m1, m2 = _values(changed, exps, sym1), _values(changed, exps, sym2)
        if m1 == m2 or (d2 - d1) % (m2 - m1):
            continue
        k = (d2 - d1) // (m2 - m1)
        c = d1 - k * m1
        if k > 0 and abs(c) <= MAX_OFFSET:
            fits.append((abs(c), k, exps, c))
    if not fits:
        return None
    fits.sort()
    if len(fits) > 1 and fits[0][0] == fits[1][0]:
        raise ScaleError(f"{d1} -> {d2} fits two forms with an offset; ambiguous")
    _, k, exps, c = fits[0]
    mono = format_monomial(k, dict(zip(changed, exps)))
    return format_poly(poly_add(as_poly(mono), {(0, 0): c}))


def fit(d1: int, d2: int, sym1: dict, sym2: dict, changed: list[str]) -> int | str:
    """The dimension as the format writes it, from its values in the two captures; ScaleError if no monomial."""
    if d1 == d2:
        return d1
    if d1 <= 0 or d2 <= 0:
        raise ScaleError(f"{d1} -> {d2} is not a monomial of {'/'.join(changed)}")
    ratio = Fraction(d2, d1)
    for exps in itertools.product(range(MAX_EXPONENT + 1), repeat=len(changed)):
        r, base = Fraction(1), 1
        for s, e in zip(changed, exps):
            r *= Fraction(sym2[s], sym1[s]) ** e
            base *= sym1[s] ** e
        if r == ratio and d1 % base == 0:
            return format_monomial(d1 // base, dict(zip(changed, exps)))
    with_offset = _fit_offset(d1, d2, sym1, sym2, changed)
    if with_offset is not None:
        return with_offset
    raise ScaleError(f"{d1} -> {d2} is not a monomial of {'/'.join(changed)} "
                     f"({', '.join(f'{s}: {sym1[s]} -> {sym2[s]}' for s in changed)})")


def _fit_value(v1, v2, where, ctx):
    """Ints that differ become monomials; lists recurse; anything else must be equal."""
    if isinstance(v1, list) and isinstance(v2, list):
        if len(v1) != len(v2):
            raise ScaleError(f"{where}: lists of different lengths ({len(v1)} and {len(v2)})")
        return [_fit_value(a, b, f"{where}[{i}]", ctx) for i, (a, b) in enumerate(zip(v1, v2))]
    if (isinstance(v1, int) and isinstance(v2, int) and not isinstance(v1, bool) and not isinstance(v2, bool)):
        try:
            return fit(v1, v2, *ctx)
        except ScaleError as e:
            raise ScaleError(f"{where}: {e}") from None
    if isinstance(v1, float) and isinstance(v2, float):
        return v1  # a value, not a size (the optimizer's bias correction moves with the step count): the first's
    if v1 != v2:
        raise ScaleError(f"{where}: {v1!r} in the first capture, {v2!r} in the second")
    return v1


def _op_where(graph, i) -> str:
    op = graph["ops"][i]
    m = op.get("module")
    path = graph["modules"][m]["path"] if m is not None else None
    return (f"op {i} ({op['op']}.{op['overload']}, phase {op['phase']}, "
            f"module {path!r})" if m is not None else f"op {i} ({op['op']}.{op['overload']}, phase {op['phase']})")


def _same_structure(a, b) -> bool:
    return (a["op"], a["overload"], a["phase"], a.get("module"), a["view"], a["recompute"], len(a["in"]),
            len(a["out"])) == (b["op"], b["overload"], b["phase"], b.get("module"), b["view"], b["recompute"],
                               len(b["in"]), len(b["out"]))


def _fit_refs(r1, r2, where, ctx):
    if isinstance(r1, list) or isinstance(r2, list):
        if not (isinstance(r1, list) and isinstance(r2, list)) or len(r1) != len(r2):
            raise ScaleError(f"{where}: tensor lists differ")
        return [_fit_refs(a, b, f"{where}[{i}]", ctx) for i, (a, b) in enumerate(zip(r1, r2))]
    if r1 is None or r2 is None:
        if r1 is not r2:
            raise ScaleError(f"{where}: a tensor in one capture, none in the other")
        return None
    if r1["t"] != r2["t"] or r1["dtype"] != r2["dtype"]:
        raise ScaleError(f"{where}: storage {r1['t']} ({r1['dtype']}) in the first capture, storage {r2['t']} "
                         f"({r2['dtype']}) in the second")
    out = dict(r1)
    for key in ("shape", "stride"):
        out[key] = _fit_value(r1[key], r2[key], f"{where}.{key}", ctx)
    out["offset"] = _fit_value(r1["offset"], r2["offset"], f"{where}.offset", ctx)
    return out


def _fit_bytes(j, t1, t2, ops, ctx):
    """A storage's bytes: a monomial (with offset) where one fits, else the extent of the tensor that the op which
    allocated it returned (a product of fitted sizes and strides: 8*B*(S+1) = 8*B*S+8*B), checked against both
    captures."""
    t = dict(t1)
    try:
        t["bytes"] = _fit_value(t1["bytes"], t2["bytes"], f"storage {j} bytes", ctx)
        return t
    except ScaleError as e:
        error = e
    sym1, sym2, _ = ctx
    for op in ops:
        if j in op["alloc"]:
            for r in _flat(op["out"]):
                if r["t"] == j:
                    poly = extent_bytes(r)
                    text = format_poly(poly)
                    if evaluate(text, sym1) == t1["bytes"] and evaluate(text, sym2) == t2["bytes"]:
                        t["bytes"] = text
                        return t
            break
    raise error


def _flat(refs):
    for r in refs:
        if isinstance(r, list):
            yield from (x for x in r if x is not None)
        elif r is not None:
            yield r


def merge(g1: dict, g2: dict) -> tuple[dict, list[str]]:
    """The first capture with every scaling dimension written as a monomial; warnings about lifetimes that differ.

    Raises ScaleError naming the first op where the two captures' op sequences part, or a field that is no monomial.
    """
    sym1, sym2 = g1["symbols"], g2["symbols"]
    changed = check_identifiable(sym1, sym2)
    ctx = (sym1, sym2, changed)
    o1, o2 = g1["ops"], g2["ops"]
    for i in range(min(len(o1), len(o2))):
        if not _same_structure(o1[i], o2[i]):
            raise ScaleError(f"the two captures run different op sequences: {_op_where(g1, i)} in the first, "
                             f"{_op_where(g2, i)} in the second (the model's code takes another path at the other "
                             f"shape; capture at a second shape on the same path)")
    if len(o1) != len(o2):
        raise ScaleError(f"the two captures run {len(o1)} and {len(o2)} ops")
    if len(g1["tensors"]) != len(g2["tensors"]):
        raise ScaleError(f"the two captures hold {len(g1['tensors'])} and {len(g2['tensors'])} storages")
    warnings = []
    ops = []
    for i, (a, b) in enumerate(zip(o1, o2)):
        where = _op_where(g1, i)
        op = dict(a)
        op["in"] = _fit_refs(a["in"], b["in"], f"{where} in", ctx)
        op["out"] = _fit_refs(a["out"], b["out"], f"{where} out", ctx)
        args = {}
        for k in sorted(set(a["args"]) | set(b["args"]), key=int):
            if k not in a["args"] or k not in b["args"]:
                raise ScaleError(f"{where}: argument {k} passed in one capture only")
            args[k] = _fit_value(a["args"][k], b["args"][k], f"{where} argument {k}", ctx)
        op["args"] = args
        if sorted(a["alloc"]) != sorted(b["alloc"]) or sorted(a["free"]) != sorted(b["free"]):
            warnings.append(f"{where}: allocations or frees differ between the captures (the first's are kept)")
        ops.append(op)
    tensors = [_fit_bytes(j, t1, t2, ops, ctx) for j, (t1, t2) in enumerate(zip(g1["tensors"], g2["tensors"]))]
    out = dict(g1)
    out["ops"], out["tensors"], out["scaled"] = ops, tensors, True
    out["second_symbols"] = dict(sym2)
    return out, warnings
