package local

import (
	"database/sql"
	"encoding/json"
	"time"
)

// How Go values map to columns: times as Unix nanoseconds and the zero
// time as NULL, so that "not set" survives the round trip; JSON and byte
// fields as BLOBs, NULL when empty.

func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func timeCol(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64)
}

func blobArg(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}

// textArg stores the empty string as NULL, for optional text columns.
func textArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func attrsArg(m map[string]string) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

func attrsCol(s sql.NullString) (map[string]string, error) {
	if !s.Valid {
		return nil, nil
	}
	var m map[string]string
	return m, json.Unmarshal([]byte(s.String), &m)
}

func boolArg(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// nullIfEmpty stores "" as NULL, which the statements read as "not given".
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
