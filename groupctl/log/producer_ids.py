"""Producer ids and epochs handed out by InitProducerId, unique across a cluster and across
restarts without any I/O.

An id is `(block << 20) | (node_id << 10) | n`: `block` is a wall-clock millisecond taken when
the first id is asked for, `node_id` (0..1023) the issuing node's id, and n counts 0 .. 2^10-1
within the block; when a block is used up the next one is max(now, block + 1).

Invariants:
- Unique across the cluster: nodes have distinct ids (each holds its ephemeral
  `/brokers/ids/<id>`), so two nodes never share the middle bits, whatever their clocks say.
- Unique across restarts of one node, provided the wall clock does not step back across the
  restart and the previous run did not hand out more than 2^10 ids per millisecond on average
  (only that carries blocks ahead of the clock). A persisted counter would need an fsync per id
  (or block reservations) and a data dir; the clock needs neither.
- Ids stay below 2^63 until milliseconds reach 2^43 (year 2248). A new id starts at epoch 0;
  `bump` (InitProducerId v3+, KIP-360) gives a producer holding an id this node issued a new epoch.

Deliberate differences from Apache Kafka: Kafka reserves blocks of 1000 ids in ZooKeeper (or the
controller), where here ids derive from the clock and the node id (no store write, but node ids
are limited to 0..1023); Kafka answers every non-transactional InitProducerId with a fresh id,
where this node bumps the epoch of an id it issued, so the partitions keep one producer id.
"""

from __future__ import annotations

from collections import OrderedDict

NODE_BITS = 10
SEQUENCE_BITS = 10
MAX_NODE_ID = 2**NODE_BITS - 1
MAX_EPOCH = 2**15 - 1  # epochs are int16
DEFAULT_MAX_REMEMBERED = 100_000


class ProducerIdAllocator:
    def __init__(self, *, node_id: int = 0, max_remembered: int = DEFAULT_MAX_REMEMBERED,
                 sequence_bits: int = SEQUENCE_BITS) -> None:
        """`node_id` must be this node's cluster-unique id, 0..MAX_NODE_ID; `sequence_bits`
        sets how many ids one block holds (smaller only in tests, to use blocks up quickly)."""
        if not 0 <= node_id <= MAX_NODE_ID:
            raise ValueError(f"node id {node_id} is outside 0..{MAX_NODE_ID}, so producer ids could collide")
        self.max_remembered = max_remembered
        self._sequence_bits = sequence_bits
        self._node_part = node_id << sequence_bits
        self._block = -1
        self._next = 1 << sequence_bits  # no block yet: the first allocation takes one
        self._epochs: OrderedDict[int, int] = OrderedDict()  # id -> latest epoch issued, oldest first

    def allocate(self, now_ms: int) -> tuple[int, int]:
        """A producer id never issued before, with epoch 0."""
        if self._next >= 1 << self._sequence_bits:
            self._block = max(now_ms, self._block + 1)
            self._next = 0
        producer_id = (self._block << (NODE_BITS + self._sequence_bits)) | self._node_part | self._next
        self._next += 1
        self._remember(producer_id, 0)
        return producer_id, 0

    def bump(self, producer_id: int, epoch: int, now_ms: int) -> tuple[int, int]:
        """Answer a producer that holds (`producer_id`, `epoch`) and asks for a new epoch.

        - The pair is the latest this allocator issued: the same id with epoch + 1.
        - `epoch` is one behind the latest issued (a retry of a bump whose answer was lost):
          the latest pair again.
        - Anything else (an id this run did not issue or has forgotten, an epoch that was never
          issued, an exhausted epoch): a fresh id with epoch 0, as Kafka answers every
          non-transactional producer. Never an error: fencing a non-transactional producer
          would be fatal to it (kafka-python and librdkafka treat PRODUCER_FENCED as fatal)
          although no other producer can hold its id.
        """
        latest = self._epochs.get(producer_id)
        if latest is not None and epoch == latest and latest < MAX_EPOCH:
            self._remember(producer_id, latest + 1)
            return producer_id, latest + 1
        if latest is not None and epoch == latest - 1:
            self._epochs.move_to_end(producer_id)
            return producer_id, latest
        return self.allocate(now_ms)

    def _remember(self, producer_id: int, epoch: int) -> None:
        self._epochs[producer_id] = epoch
        self._epochs.move_to_end(producer_id)
        while len(self._epochs) > self.max_remembered:
            self._epochs.popitem(last=False)
