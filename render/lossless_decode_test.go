package render

import "encoding/base64"

// OriginalBytes returns the exact value of a string field of a decoded JSON
// object: the base64 sibling when present, else the string itself. It is
// how a consumer of kaasctl's JSON reads an id back; the tests read ours
// with it.
func OriginalBytes(obj map[string]any, field string) (string, bool) {
	if b64, ok := obj[field+Base64Suffix].(string); ok {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	s, ok := obj[field].(string)
	return s, ok
}
