"""NGRAM's token trie: host (CPU) memory, not GPU memory.

NGRAM drafts from a trie of the tokens seen so far; there is no draft model and no draft KV pool. Each TP
rank's NGRAMWorker builds an ``NgramCorpus`` with ``--speculative-ngram-capacity`` nodes
(srt/speculative/ngram_worker.py:53-61 @0.5.9, :114-123 @0.5.23), whose C++ trie preallocates every node at
construction, ``nodes_.resize(capacity)``, and a free list of node pointers filled by ``emplace_back``
(srt/speculative/cpp_ngram/ngram.cpp:63-69 @0.5.9; jit_kernel/csrc/ngram_corpus/trie.cpp:12-17 @0.5.10,
kernels/jit/csrc/ngram_corpus/trie.cpp:14-19 @0.5.23). ``sizeof(TrieNode)`` on x86-64 libstdc++ (checked by
compiling the struct verbatim with g++ 12): 168 B in 0.5.9-0.5.10 (srt/speculative/cpp_ngram/ngram.h:21-36
@0.5.9; jit_kernel/csrc/ngram_corpus/trie.h:17-32 @0.5.10), 176 B from 0.5.11, which adds a ``uint64_t
version`` (jit_kernel/csrc/ngram_corpus/trie.h:17-37 @0.5.11). The free list's vector grows by doubling, so its
buffer holds the next power of two of pointers. What the trie allocates as it fills (its children maps,
LRU lists and sorted sets) comes on top and depends on the traffic: not computed.
"""

from __future__ import annotations

POINTER_BYTES = 8


def trie_host_bytes(capacity: int, node_bytes: int) -> int:
    """Bytes one rank's trie holds from construction: the node array and the free list's buffer."""
    pool = 1 << max(capacity - 1, 0).bit_length() if capacity > 0 else 0
    return capacity * node_bytes + pool * POINTER_BYTES


def trie_note(capacity: int, node_bytes: int, tp: int, version: str) -> str:
    """One line for the report: where the trie lives and what it holds from the start."""
    per = trie_host_bytes(capacity, node_bytes)
    total = f", {per * tp / (1 << 30):.2f} GiB for tp {tp}" if tp > 1 else ""
    return (f"NGRAM: no draft model and no draft KV pool; its token trie is in host (CPU) memory, not GPU memory: "
            f"--speculative-ngram-capacity {capacity:,} nodes x {node_bytes} B (TrieNode, SGLang {version}) + the "
            f"node free list = {per:,} B ({per / (1 << 30):.2f} GiB) of RAM per TP rank from start-up{total}, "
            "more as it fills")
