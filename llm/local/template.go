package local

import (
	"strings"

	"github.com/toolgate/toolgate/llm"
)

// chatMessage is one message as the chat template takes it.
type chatMessage struct{ role, content string }

// chatMessages maps the conversation to the chat template's roles:
// system, user and assistant. A tool result becomes a user message (a
// template without a tool role would drop it), named by its tool; an
// assistant message's native calls, which no envelope-mode reply has, are
// written out as envelopes. A NUL byte becomes U+FFFD: the template takes
// C strings, which a NUL would end, dropping the rest of the message.
func chatMessages(msgs []llm.Message) []chatMessage {
	out := make([]chatMessage, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser:
			out = append(out, chatMessage{string(m.Role), m.Content})
		case llm.RoleAssistant:
			content := m.Content
			for _, c := range m.ToolCalls {
				if content != "" {
					content += "\n"
				}
				content += `{"action":"call","tool":"` + c.Name + `","arguments":` + string(c.Arguments) + `}`
			}
			out = append(out, chatMessage{"assistant", content})
		default:
			content := m.Content
			if m.Name != "" {
				content = "Result of " + m.Name + ": " + content
			}
			out = append(out, chatMessage{"user", content})
		}
	}
	for i := range out {
		out[i].content = strings.ReplaceAll(out[i].content, "\x00", "\uFFFD")
	}
	return out
}

// templateOr returns the chat template to render with: tmpl, or "chatml"
// when the GGUF has none (llama.cpp's own default).
func templateOr(tmpl string) string {
	if strings.TrimSpace(tmpl) == "" {
		return "chatml"
	}
	return tmpl
}

// describeTemplate names a template in an error: a name as it is, a
// template text by its start.
func describeTemplate(tmpl string) string {
	if len(tmpl) <= 40 && !strings.ContainsAny(tmpl, "{}\n") {
		return `"` + tmpl + `"`
	}
	if len(tmpl) > 60 {
		tmpl = tmpl[:60] + "…"
	}
	return "of the GGUF (" + strings.ReplaceAll(tmpl, "\n", `\n`) + ")"
}
