// gbnf-mask: llama.cpp's own grammar sampler (llama_grammar_apply_impl and
// llama_grammar_accept_impl) over a vocabulary, step by step, for comparing
// token masks.
//
// Usage: gbnf-mask GRAMMAR_FILE VOCAB_FILE < steps
// VOCAB_FILE: one token per line, by id: "T <hex piece>" for a token
// matched by its text, "E" for an end-of-generation token. The vocabulary
// is handed to llama.cpp through ollama_vocab (the path Ollama's runner
// uses), so the pieces are exactly the given bytes, read as C strings (a
// piece is cut at its first NUL, as llama.cpp's own would be).
// stdin: token ids, one per line. Before the first and after each accepted
// id, one line goes to stdout: "M <ns> <hex bitset>", bit i of the bitset
// (little-endian 64-bit words, printed word by word as 16 hex digits,
// lowest word first) set when llama.cpp leaves token i's logit finite;
// <ns> is the wall time of llama_grammar_apply_impl over the whole
// vocabulary. "X <message>" when llama.cpp throws or refuses the grammar.

#include "llama-grammar.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

static std::string read_file(const char * path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int main(int argc, char ** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: gbnf-mask GRAMMAR_FILE VOCAB_FILE < steps\n");
        return 3;
    }
    const std::string src = read_file(argv[1]);
    const std::string grammar_src(src.c_str());

    std::vector<std::string> pieces;
    std::vector<uint32_t> eog;
    {
        std::ifstream vf(argv[2]);
        std::string line;
        while (std::getline(vf, line)) {
            const uint32_t id = pieces.size();
            if (line == "E") {
                eog.push_back(id);
                pieces.emplace_back("");
                continue;
            }
            std::string p;
            for (size_t i = 2; i + 1 < line.size(); i += 2) {
                p.push_back((char) (hexval(line[i]) * 16 + hexval(line[i + 1])));
            }
            pieces.push_back(p);
        }
    }
    ollama_vocab vocab;
    {
        std::vector<uint32_t> ids(pieces.size());
        std::vector<const char *> ptrs(pieces.size());
        for (size_t i = 0; i < pieces.size(); i++) {
            ids[i] = i;
            ptrs[i] = pieces[i].c_str();
        }
        vocab.add_token_pieces(ids.data(), ids.size(), ptrs.data());
        vocab.set_eog_tokens(eog.data(), eog.size());
    }

    llama_grammar * g = llama_grammar_init_impl(nullptr, &vocab, grammar_src.c_str(), "root", false, nullptr, 0, nullptr, 0);
    if (!g) {
        std::printf("X grammar refused\n");
        return 2;
    }
    std::vector<llama_token_data> data(pieces.size());
    const size_t words = (pieces.size() + 63) / 64;
    std::vector<uint64_t> bits(words);
    auto emit = [&]() {
        for (size_t i = 0; i < data.size(); i++) {
            data[i] = llama_token_data{ (llama_token) i, 0.0f, 0.0f };
        }
        llama_token_data_array arr{ data.data(), data.size(), -1, false };
        const auto t0 = std::chrono::steady_clock::now();
        llama_grammar_apply_impl(*g, &arr);
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
        std::fill(bits.begin(), bits.end(), 0);
        for (size_t i = 0; i < arr.size; i++) {
            if (std::isfinite(arr.data[i].logit)) {
                const uint32_t id = arr.data[i].id;
                bits[id / 64] |= uint64_t(1) << (id % 64);
            }
        }
        std::printf("M %lld ", (long long) ns);
        for (uint64_t w : bits) {
            std::printf("%016llx", (unsigned long long) w);
        }
        std::printf("\n");
        std::fflush(stdout);
    };
    try {
        emit();
        long long id;
        while (std::cin >> id) {
            llama_grammar_accept_impl(*g, (llama_token) id);
            emit();
        }
    } catch (const std::exception & e) {
        std::printf("X %s\n", e.what());
        return 1;
    }
    llama_grammar_free_impl(g);
    return 0;
}
