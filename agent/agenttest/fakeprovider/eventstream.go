package fakeprovider

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strings"
)

// writeEventStream writes e as one message of the AWS event stream
// encoding (https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html):
// a prelude of the total and the headers' lengths with its CRC, the
// headers, the payload, and the CRC of all of it.
func writeEventStream(w io.Writer, e Event) error {
	headers := [][2]string{{":message-type", "event"}, {":event-type", e.Type}, {":content-type", "application/json"}}
	if strings.HasSuffix(e.Type, "Exception") {
		headers = [][2]string{{":message-type", "exception"}, {":exception-type", e.Type}, {":content-type", "application/json"}}
	}
	var h bytes.Buffer
	for _, kv := range headers {
		h.WriteByte(byte(len(kv[0])))
		h.WriteString(kv[0])
		h.WriteByte(7) // a string value
		_ = binary.Write(&h, binary.BigEndian, uint16(len(kv[1])))
		h.WriteString(kv[1])
	}
	var msg bytes.Buffer
	total := 12 + h.Len() + len(e.Data) + 4
	_ = binary.Write(&msg, binary.BigEndian, uint32(total))
	_ = binary.Write(&msg, binary.BigEndian, uint32(h.Len()))
	_ = binary.Write(&msg, binary.BigEndian, crc32.ChecksumIEEE(msg.Bytes()))
	msg.Write(h.Bytes())
	msg.WriteString(e.Data)
	_ = binary.Write(&msg, binary.BigEndian, crc32.ChecksumIEEE(msg.Bytes()))
	_, err := w.Write(msg.Bytes())
	return err
}
