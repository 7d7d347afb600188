// gbnf-batch: gbnf-check's matching loop over many inputs in one process.
//
// Usage: gbnf-batch GRAMMAR_FILE < frames
// Each frame on stdin is a 4-byte little-endian length followed by that many
// input bytes. For each frame one line goes to stdout:
//   A            the whole input is a sentence of the grammar (from root)
//   R <offset>   rejected at that byte offset (as gbnf-check reports it)
//   E            llama.cpp refused the grammar (then every frame answers E)
//
// It calls exactly what gbnf-check (../shared/tools/gbnfcheck/gbnf_check.cpp)
// calls, in the same order: llama_grammar_init_impl with a null vocab, then
// unicode_cpt_from_utf8 and llama_grammar_accept per code point, an empty
// stack set meaning rejection at that code point's first byte, and at the
// end acceptance only if some stack is empty. The grammar is initialised
// afresh for every input. If llama.cpp crashes on a grammar the process
// dies; the Go side then asks gbnf-check about the remaining inputs.

#include "llama-grammar.h"
#include "unicode.h"

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

static bool read_exact(std::FILE * f, void * buf, size_t n) {
    return std::fread(buf, 1, n, f) == n;
}

int main(int argc, char ** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: gbnf-batch GRAMMAR_FILE < frames\n");
        return 3;
    }
    std::string src;
    {
        std::FILE * f = std::fopen(argv[1], "rb");
        if (!f) {
            std::perror(argv[1]);
            return 3;
        }
        char buf[65536];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
            src.append(buf, n);
        }
        std::fclose(f);
    }
    const std::string grammar_src(src.c_str()); // llama.cpp reads a C string

    // llama.cpp prints its own parse errors to stderr; keep stdout for verdicts
    llama_grammar * probe = llama_grammar_init_impl(nullptr, nullptr, grammar_src.c_str(), "root", false, nullptr, 0, nullptr, 0);
    const bool grammar_ok = probe != nullptr;
    llama_grammar_free_impl(probe);

    std::string input;
    for (;;) {
        unsigned char len_le[4];
        if (!read_exact(stdin, len_le, 4)) {
            break;
        }
        const uint32_t len = uint32_t(len_le[0]) | uint32_t(len_le[1]) << 8 | uint32_t(len_le[2]) << 16 | uint32_t(len_le[3]) << 24;
        input.resize(len);
        if (len > 0 && !read_exact(stdin, &input[0], len)) {
            std::fprintf(stderr, "gbnf-batch: truncated frame\n");
            return 3;
        }
        if (!grammar_ok) {
            std::printf("E\n");
            std::fflush(stdout);
            continue;
        }
        llama_grammar * grammar = llama_grammar_init_impl(nullptr, nullptr, grammar_src.c_str(), "root", false, nullptr, 0, nullptr, 0);
        auto & stacks = llama_grammar_get_stacks(grammar);
        size_t offset = 0;
        long rejected = -1;
        while (offset < input.size()) {
            const size_t start = offset;
            uint32_t cpt;
            try {
                cpt = unicode_cpt_from_utf8(input, offset);
            } catch (const std::invalid_argument &) {
                rejected = long(start);
                break;
            }
            llama_grammar_accept(grammar, cpt);
            if (stacks.empty()) {
                rejected = long(start);
                break;
            }
        }
        if (rejected < 0) {
            bool complete = false;
            for (const auto & st : stacks) {
                complete = complete || st.empty();
            }
            if (!complete) {
                rejected = long(input.size());
            }
        }
        llama_grammar_free_impl(grammar);
        if (rejected < 0) {
            std::printf("A\n");
        } else {
            std::printf("R %ld\n", rejected);
        }
        std::fflush(stdout);
    }
    return 0;
}
