// Counts and patterns worded as the server words them (`count` in app/web/present/strings.py, `interpolate`
// in app/forms/jsformat.py; tests/unit/test_js_wording.py holds the two alike), for the text a script
// writes: the patterns come from the page (data- attributes), already in the reader's language.

/**
 * A count with its digits grouped by thousands, in either language (`strings.count`).
 * @param {number} n
 * @returns {string}
 */
export function grouped(n) {
  return String(n).replace(/\B(?=(\d{3})+$)/g, ",");
}

/**
 * `pattern` with each `{name}` replaced by its value; a number is a count, grouped.
 * @param {string} pattern
 * @param {Record<string, string | number>} values
 * @returns {string}
 */
export function fill(pattern, values) {
  return pattern.replace(/\{([a-z]+)\}/g, (whole, name) => {
    if (!Object.hasOwn(values, name)) return whole;
    const value = values[name];
    return typeof value === "number" ? grouped(value) : value;
  });
}
