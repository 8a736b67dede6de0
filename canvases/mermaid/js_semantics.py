"""JavaScript semantics the plugin's readers have (Node.js): whitespace, trim, JSON.parse,
String(), truthiness and UTF-16 lengths, for emulating them exactly in Python."""

from __future__ import annotations

import json
import math
from decimal import Decimal

from .human_text import JS_SPACE

# JS `\s` and String.prototype.trim's set (WhiteSpace + LineTerminator).
JS_WS_CLASS = f"[{JS_SPACE}]"
# JS `.` without the `s` flag: anything but a line terminator.
JS_DOT = "[^\n\r\u2028\u2029]"
_TRIM_CHARS = (
    "".join(
        chr(c)
        for c in [9, 10, 11, 12, 13, 32, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
    )
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\ufeff"
)


def js_trim(text: str) -> str:
    """String.prototype.trim (it strips a BOM, which Python's str.strip does not)."""
    return text.strip(_TRIM_CHARS)


def js_json_parse(text: str) -> object:
    """JSON.parse: like json.loads, but NaN/Infinity are errors and every number is a double."""
    return json.loads(text, parse_constant=_reject_constant, parse_int=_js_int)


def _reject_constant(name: str) -> object:
    raise ValueError(f"JSON.parse rejects {name}")


def _js_int(digits: str) -> int | float:
    if len(digits) < 16:
        return int(digits)
    value = float(digits)  # a double, as in JS (and no limit on the number of digits)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def js_truthy(value: object) -> bool:
    """`value || …` keeps it: everything but "", 0, false, null (arrays and objects are truthy)."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    return True


def js_string(value: object) -> str:
    """String(value) for a JSON value, as a template literal `${value}` writes it."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"


def js_number(value: int | float) -> str:
    """Number.prototype.toString (ECMAScript Number::toString, radix 10)."""
    try:
        number = float(value)
    except OverflowError:
        return "Infinity" if value > 0 else "-Infinity"
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    if number < 0:
        return "-" + js_number(-number)
    sign, digit_tuple, exponent = Decimal(repr(number)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    k = len(digits)
    n = exponent + len(digit_tuple)  # value = 0.digits × 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def utf16_length(text: str) -> int:
    """`text.length` in JS: UTF-16 code units (an emoji counts 2)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_slice(text: str, end: int) -> str:
    """`text.slice(0, end)` in JS; may cut a surrogate pair in half, as JS does."""
    if text.isascii():
        return text[:end]
    units = text.encode("utf-16-le", "surrogatepass")[: 2 * end]
    return units.decode("utf-16-le", "surrogatepass")
