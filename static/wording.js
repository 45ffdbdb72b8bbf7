// Counts and patterns worded as the server words them (`count` and `choose_forms` in app/web/present/strings.py, `interpolate`
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

// A word after a count in its two English forms, `{count|session|sessions}`: the first when the count is
// written `1` (`choose_forms` in app/web/present/strings.py)
const FORMS = /\{([a-z]+)\|([^|{}]*)\|([^|{}]*)\}/g;

/**
 * `pattern` with each `{name|one|other}` replaced by the form its count takes, and each `{name}` by its value;
 * a number is a count, grouped.
 * @param {string} pattern
 * @param {Record<string, string | number>} values
 * @returns {string}
 */
export function fill(pattern, values) {
  return pattern.replace(FORMS, (whole, name, one, other) => {
    if (!Object.hasOwn(values, name)) return whole;
    const value = values[name];
    return (typeof value === "number" ? grouped(value) : value) === "1" ? one : other;
  }).replace(/\{([a-z]+)\}/g, (whole, name) => {
    if (!Object.hasOwn(values, name)) return whole;
    const value = values[name];
    return typeof value === "number" ? grouped(value) : value;
  });
}
