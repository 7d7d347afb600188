package mask

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/gguf"
	"github.com/toolgate/toolgate/internal/textcut"
)

// llama.cpp's token types (llama_token_type), in tokenizer.ggml.token_type.
const (
	ggufNormal      = 1
	ggufUnknown     = 2
	ggufControl     = 3
	ggufUserDefined = 4
	ggufUnused      = 5
	ggufByte        = 6
)

// ggufEndTexts are the tokens llama.cpp's vocabulary loader also counts
// as end of generation, found by their text whatever their type (it makes
// a normal one a control token): the list of llama-vocab.cpp's
// special_eog_ids.
var ggufEndTexts = map[string]bool{
	"<|eot_id|>": true, "<|im_end|>": true, "<|end|>": true, "<|return|>": true, "<|call|>": true,
	"<|flush|>": true, "<|calls|>": true, "<end_of_turn>": true, "<|endoftext|>": true, "</s>": true,
	"<|eom_id|>": true, "<EOT>": true, "_<EOT>": true, "[EOT]": true, "[EOS]": true,
	"<|end_of_text|>": true, "<end_of_utterance>": true, "<eos>": true, "<turn|>": true,
	"<|tool_response>": true, "<｜end▁of▁sentence｜>": true, "[e~[": true,
}

// ggufEscapedSpaces are the pre-tokenizers of BPE vocabularies whose
// pieces write a space as "▁", as SentencePiece's do (llama.cpp's
// escape_whitespaces; a "gemma4" tokenizer model is one of them).
var ggufEscapedSpaces = map[string]bool{"gemma4": true, "granite-embed-multi-311m": true, "sarvam-moe": true}

// maxQuoted bounds the bytes of a text of the file an error quotes.
const maxQuoted = 64

// ReadGGUF reads a model's vocabulary from the metadata of a GGUF file
// (the tensors are not read): tokenizer.ggml.tokens,
// tokenizer.ggml.token_type, tokenizer.ggml.model and tokenizer.ggml.pre,
// and the end-of-generation ids tokenizer.ggml.eos_token_id, eot_token_id
// and eom_token_id. Pieces are decoded as llama.cpp's token_to_piece does:
// for "llama" (SentencePiece), "t5" and "gemma4" models, and "gpt2" ones
// whose pre-tokenizer escapes spaces (gemma4, sarvam-moe,
// granite-embed-multi-311m), "▁" is a space; for other "gpt2" (byte-level
// BPE) models each character stands for a byte; in all, <0xXX> byte
// tokens are that byte and a token of a type llama.cpp does not know has
// an empty piece (never allowed). Control, unknown and unused tokens are [KindControl],
// the end-of-generation ones (and the tokens llama.cpp recognises by
// their text, such as <|eot_id|>, whatever their type) [KindEnd].
//
// Every count and length in the file is checked before it is allocated:
// at most [MaxTokens] tokens and 256 MiB of metadata; the pieces have at
// most [MaxPieceLen] bytes each and [MaxPieceBytes] in all. Errors wrap
// [ErrVocabulary], or the reader's error ([io.ErrUnexpectedEOF] for a file cut
// short).
func ReadGGUF(r io.Reader) (*Vocabulary, error) {
	keys := map[string]bool{
		"tokenizer.ggml.model": true, "tokenizer.ggml.pre": true, "tokenizer.ggml.tokens": true, "tokenizer.ggml.token_type": true,
		"tokenizer.ggml.eos_token_id": true, "tokenizer.ggml.eot_token_id": true, "tokenizer.ggml.eom_token_id": true,
	}
	md, err := gguf.Read(r, func(k string) bool { return keys[k] }, &gguf.Limits{MaxArray: MaxTokens})
	if err != nil {
		if errors.Is(err, gguf.ErrFormat) || errors.Is(err, gguf.ErrLimit) {
			return nil, fmt.Errorf("%w: %w", ErrVocabulary, err)
		}
		return nil, err
	}
	model := md.KV["tokenizer.ggml.model"]
	tokens := md.KV["tokenizer.ggml.tokens"]
	if model.Type != gguf.TypeString {
		return nil, fmt.Errorf("%w: no tokenizer.ggml.model string", ErrVocabulary)
	}
	if tokens.Type != gguf.TypeArray || tokens.Elem != gguf.TypeString || len(tokens.Strs) == 0 {
		return nil, fmt.Errorf("%w: no tokenizer.ggml.tokens string array", ErrVocabulary)
	}
	n := len(tokens.Strs)
	types := make([]int64, n)
	for i := range types {
		types[i] = ggufNormal
	}
	if tt, ok := md.KV["tokenizer.ggml.token_type"]; ok {
		if tt.Type != gguf.TypeArray || len(tt.Ints)+len(tt.Uints) != n {
			return nil, fmt.Errorf("%w: tokenizer.ggml.token_type is not an integer array of %d", ErrVocabulary, n)
		}
		for i := range types {
			if tt.Ints != nil {
				types[i] = tt.Ints[i]
			} else {
				types[i] = int64(tt.Uints[i])
			}
		}
	}
	var decode func(text string, typ int64) ([]byte, bool)
	switch model.Str {
	case "llama", "t5", "gemma4":
		decode = decodeSentencePiece
	case "gpt2":
		decode = decodeByteLevel
		if pre := md.KV["tokenizer.ggml.pre"]; pre.Type == gguf.TypeString && ggufEscapedSpaces[pre.Str] {
			decode = decodeSentencePiece
		}
	default:
		return nil, fmt.Errorf("%w: tokenizer model %q (supported: llama, t5, gemma4, gpt2)", ErrVocabulary, textcut.Shorten(model.Str, maxQuoted))
	}
	pieces := make([][]byte, n)
	kinds := make([]Kind, n)
	for i, text := range tokens.Strs {
		if ggufEndTexts[text] {
			kinds[i], pieces[i] = KindEnd, []byte(text)
			continue
		}
		switch types[i] {
		case ggufControl, ggufUnknown, ggufUnused:
			kinds[i] = KindControl
			pieces[i] = []byte(text)
			continue
		}
		p, ok := decode(text, types[i])
		if !ok {
			return nil, fmt.Errorf("%w: token %d %q of type %d cannot be decoded", ErrVocabulary, i, textcut.Shorten(text, maxQuoted), types[i])
		}
		pieces[i] = p
	}
	for _, key := range []string{"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"} {
		v, ok := md.KV[key]
		if !ok {
			continue
		}
		id, ok := integer(v)
		if !ok || id < 0 || id >= int64(n) {
			return nil, fmt.Errorf("%w: %s is not a token id", ErrVocabulary, key)
		}
		kinds[id] = KindEnd
	}
	return NewVocabulary(pieces, kinds)
}

func integer(v gguf.Value) (int64, bool) {
	switch v.Type {
	case gguf.TypeUint8, gguf.TypeUint16, gguf.TypeUint32, gguf.TypeUint64:
		return int64(v.Uint), v.Uint < 1<<62
	case gguf.TypeInt8, gguf.TypeInt16, gguf.TypeInt32, gguf.TypeInt64:
		return v.Int, true
	}
	return 0, false
}

// decodeSentencePiece is llama.cpp's token_to_piece for SPM and UGM
// vocabularies, and BPE ones that escape spaces: byte tokens <0xXX> are
// that byte, normal tokens have "▁" unescaped to a space, user-defined
// tokens are their text, and other types give an empty piece.
func decodeSentencePiece(text string, typ int64) ([]byte, bool) {
	switch typ {
	case ggufByte:
		return decodeByte(text)
	case ggufUserDefined:
		return []byte(text), true
	case ggufNormal:
		return []byte(strings.ReplaceAll(text, "\u2581", " ")), true
	}
	return []byte{}, true
}

// decodeByte is llama.cpp's token_to_byte: a byte token's text is
// <0xXX>, for the byte XX.
func decodeByte(text string) ([]byte, bool) {
	if len(text) != 6 || !strings.HasPrefix(text, "<0x") || text[5] != '>' {
		return nil, false
	}
	b, err := strconv.ParseUint(text[3:5], 16, 8)
	if err != nil {
		return nil, false
	}
	return []byte{byte(b)}, true
}

// byteLevel maps GPT-2's byte-to-character table back: the characters
// that stand for bytes in a byte-level BPE vocabulary.
var byteLevel = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			m[rune(b)] = byte(b)
		} else {
			m[rune(256+n)] = byte(b)
			n++
		}
	}
	return m
}()

// decodeByteLevel is llama.cpp's token_to_piece for BPE vocabularies:
// normal tokens are decoded character by character through GPT-2's byte
// table (llama_decode_text), user-defined tokens are their text, byte
// tokens <0xXX> that byte, and other types give an empty piece (never
// allowed). A character outside the table
// becomes the text llama_decode_text writes for it, "[UNK_BYTE_0x<its
// UTF-8 in hex><the whole token text>]": that is what llama.cpp would
// print for the token.
func decodeByteLevel(text string, typ int64) ([]byte, bool) {
	switch typ {
	case ggufUserDefined:
		return []byte(text), true
	case ggufByte:
		return decodeByte(text)
	case ggufNormal:
	default:
		return []byte{}, true
	}
	out := make([]byte, 0, len(text))
	for _, r := range text {
		if b, ok := byteLevel[r]; ok {
			out = append(out, b)
			continue
		}
		if r == utf8.RuneError {
			return nil, false
		}
		out = append(out, "[UNK_BYTE_0x"...)
		out = hex.AppendEncode(out, utf8.AppendRune(nil, r))
		out = append(out, text...)
		out = append(out, ']')
	}
	return out, true
}
