package errcodec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
)

// registered holds what Register was given, for the whole process: an
// error must revive the same wherever its log is read, so registration is
// done once, at init time, in every process that runs or reads workflows.
var registered = struct {
	sync.RWMutex
	sentinels map[string]error        // type + message → the value
	types     map[string]reflect.Type // type name → pointer type
}{sentinels: map[string]error{}, types: map[string]reflect.Type{}}

// Register makes err revive as itself: a sentinel as the same value, and
// an error type with exported fields (given as a zero value) as a value of
// that type with its fields.
func Register(err error) {
	registered.Lock()
	defer registered.Unlock()
	name := fmt.Sprintf("%T", err)
	registered.sentinels[name+"\x00"+err.Error()] = err
	if t := reflect.TypeOf(err); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && t.Elem().NumField() > 0 && exported(t.Elem()) {
		registered.types[name] = t
	}
}

func exported(t reflect.Type) bool {
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			return false
		}
	}
	return true
}

func isRegisteredType(name string) bool {
	registered.RLock()
	defer registered.RUnlock()
	_, ok := registered.types[name]
	return ok
}

// registeredError revives a record of a registered error type or
// sentinel; nil if it is neither.
func registeredError(r *Record) error {
	registered.RLock()
	sentinel, isSentinel := registered.sentinels[r.Type+"\x00"+r.Message]
	t, isType := registered.types[r.Type]
	registered.RUnlock()
	if r.Kind == "registered" && isType {
		v := reflect.New(t.Elem())
		if json.Unmarshal(r.Data, v.Interface()) == nil {
			if err, ok := v.Interface().(error); ok {
				return err
			}
		}
	}
	if isSentinel {
		return sentinel
	}
	return nil
}
