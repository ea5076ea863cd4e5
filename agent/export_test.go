package agent

// StreamedFields feeds chunks of a model's JSON text to the watcher of
// T's streaming fields, as an Output call does, and returns the object a
// client builds from the updates it writes.
func StreamedFields[T any](chunks []string) (any, error) {
	var parts []Part
	ds := newDataStream[T]("s", func(p Part) error { parts = append(parts, p); return nil })
	watch := newFieldWatcher(streamedFields[T]())
	text := ""
	for _, c := range chunks {
		text += c
		if err := watch.update(outputText(text), ds); err != nil {
			return nil, err
		}
	}
	objects, err := Objects(parts)
	return objects["s"], err
}
