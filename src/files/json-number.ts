/**
 * JSON's number syntax (RFC 8259), as a regular expression without anchors. Where one file of a
 * commit holds a column as JSON and another (CSV) as text, a text value that spells a JSON number
 * (or true/false) is staged as that value, any other as a JSON string (each engine's stage).
 */
export const JSON_NUMBER = '-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][+-]?[0-9]+)?';
