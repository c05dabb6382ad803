"""The transaction coordinator core (KIP-98): transactional ids, producer epochs, commit and abort;
see `coordinator`."""

from groupctl.coordinator.transactions.coordinator import TransactionCoordinator
from groupctl.coordinator.transactions.outcomes import MarkerWrite, Outcome, TxnReply
from groupctl.coordinator.transactions.records import TransactionRecord, TxnState

__all__ = ["MarkerWrite", "Outcome", "TransactionCoordinator", "TransactionRecord", "TxnReply", "TxnState"]
