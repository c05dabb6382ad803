"""Every format groupctl stores, with one owner each: the paths (`paths`) and one typed,
versioned codec per document (`groups`, `offsets`, `topics`, `brokers`, `coordinators`, `transactions`,
`rebalance_requests`; `journal` declares the event journal's fields).

Invariants:
- Every reader and writer of a stored document goes through its codec here: the coordinator's
  store, the election, the tools, the analyses. A field is named in one place.
- Decoding a document that is not JSON, lacks a field or holds one of the wrong type, or carries
  a `version` newer than this groupctl knows is a `LayoutError` naming the path, never a
  KeyError. Documents without a `version` field are version 1 (as stored before it existed).
- Encoding is compact JSON (`separators=(",", ":")`), byte for byte what earlier releases wrote.
- No I/O and no other groupctl package: the core, the node and the tools all import this.
"""
