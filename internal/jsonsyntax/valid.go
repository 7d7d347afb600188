package jsonsyntax

// MaxDepth is the deepest nesting of arrays and objects [Valid] accepts:
// encoding/json's.
const MaxDepth = 10000

// Valid reports whether data is one JSON value with optional whitespace
// around it, exactly as encoding/json.Valid does: a string may hold any
// byte from 0x20 up (invalid UTF-8 included), and arrays and objects may
// nest at most [MaxDepth] deep. It scans a string's plain bytes in a tight
// loop where encoding/json steps a state machine per byte, which makes it
// several times faster on schemas and arguments, and it allocates only
// for nesting past 64 levels.
func Valid(data []byte) bool {
	var buf [64]byte
	stack := buf[:0] // '{' or '[' per open container
	pos := Space(data, 0)
	for {
		// A value starts at pos.
		if pos >= len(data) {
			return false
		}
		switch c := data[pos]; c {
		case '{', '[':
			if len(stack) == MaxDepth {
				return false
			}
			pos = Space(data, pos+1)
			if pos < len(data) && data[pos] == c+2 { // '}' or ']'
				pos++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if pos = member(data, pos); pos < 0 {
					return false
				}
			}
			continue
		case '"':
			if pos = skipString(data, pos); pos < 0 {
				return false
			}
		case 't':
			if pos = literal(data, pos, "true"); pos < 0 {
				return false
			}
		case 'f':
			if pos = literal(data, pos, "false"); pos < 0 {
				return false
			}
		case 'n':
			if pos = literal(data, pos, "null"); pos < 0 {
				return false
			}
		default:
			if c != '-' && (c < '0' || c > '9') {
				return false
			}
			end, fault := Number(data, pos)
			if fault != NumberOK {
				return false
			}
			pos = end
		}
		// A value ended at pos: close containers until one goes on.
		for {
			pos = Space(data, pos)
			if len(stack) == 0 {
				return pos == len(data)
			}
			if pos >= len(data) {
				return false
			}
			top := stack[len(stack)-1]
			c := data[pos]
			if c == top+2 {
				stack = stack[:len(stack)-1]
				pos++
				continue
			}
			if c != ',' {
				return false
			}
			pos = Space(data, pos+1)
			if top == '{' {
				if pos = member(data, pos); pos < 0 {
					return false
				}
			}
			break
		}
	}
}

// member scans an object member's name and colon from pos and returns
// the offset of its value, or -1.
func member(data []byte, pos int) int {
	if pos >= len(data) || data[pos] != '"' {
		return -1
	}
	if pos = skipString(data, pos); pos < 0 {
		return -1
	}
	if pos = Space(data, pos); pos >= len(data) || data[pos] != ':' {
		return -1
	}
	return Space(data, pos+1)
}

// skipString returns the offset after the string whose quote is at
// data[pos], or -1.
func skipString(data []byte, pos int) int {
	i := pos + 1
	for {
		for i < len(data) && plainByte[data[i]] {
			i++
		}
		if i >= len(data) {
			return -1
		}
		switch data[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(data) {
				return -1
			}
			if data[i+1] == 'u' {
				if _, ok := Hex4(data, i+2); !ok {
					return -1
				}
				i += 6
				continue
			}
			if _, ok := Escape(data[i+1]); !ok {
				return -1
			}
			i += 2
		default: // a control byte
			return -1
		}
	}
}

// plainByte says which bytes a string holds as they are: all but the
// quote, the backslash and the control bytes under 0x20.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// literal returns the offset after word at data[pos], or -1.
func literal(data []byte, pos int, word string) int {
	if len(data)-pos < len(word) || string(data[pos:pos+len(word)]) != word {
		return -1
	}
	return pos + len(word)
}
