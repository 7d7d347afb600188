package gguf

import (
	"encoding/binary"
	"math"
)

// KeyValue is one metadata pair for [Encode].
type KeyValue struct {
	Key   string
	Value Value
}

// Encode returns a GGUF file (version 3, no tensors) holding kvs, for
// tests and fixtures: strings, the integer and float types, and arrays of
// strings or numbers ([Value.Elem] with Strs, Uints, Ints or Floats).
func Encode(kvs []KeyValue) []byte {
	b := []byte("GGUF")
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(kvs)))
	for _, kv := range kvs {
		b = appendString(b, kv.Key)
		b = binary.LittleEndian.AppendUint32(b, uint32(kv.Value.Type))
		b = appendValue(b, kv.Value)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

func appendScalar(b []byte, t Type, u uint64, i int64, f float64) []byte {
	switch t {
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		u = uint64(i)
	case TypeFloat32:
		u = uint64(math.Float32bits(float32(f)))
	case TypeFloat64:
		u = math.Float64bits(f)
	}
	switch scalarSize(t) {
	case 1:
		return append(b, byte(u))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(u))
	case 4:
		return binary.LittleEndian.AppendUint32(b, uint32(u))
	}
	return binary.LittleEndian.AppendUint64(b, u)
}

func appendValue(b []byte, v Value) []byte {
	switch v.Type {
	case TypeString:
		return appendString(b, v.Str)
	case TypeArray:
		b = binary.LittleEndian.AppendUint32(b, uint32(v.Elem))
		switch {
		case v.Elem == TypeString:
			b = binary.LittleEndian.AppendUint64(b, uint64(len(v.Strs)))
			for _, s := range v.Strs {
				b = appendString(b, s)
			}
		case v.Ints != nil:
			b = binary.LittleEndian.AppendUint64(b, uint64(len(v.Ints)))
			for _, x := range v.Ints {
				b = appendScalar(b, v.Elem, 0, x, 0)
			}
		case v.Floats != nil:
			b = binary.LittleEndian.AppendUint64(b, uint64(len(v.Floats)))
			for _, x := range v.Floats {
				b = appendScalar(b, v.Elem, 0, 0, x)
			}
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(len(v.Uints)))
			for _, x := range v.Uints {
				b = appendScalar(b, v.Elem, x, 0, 0)
			}
		}
		return b
	}
	return appendScalar(b, v.Type, v.Uint, v.Int, v.Float)
}
