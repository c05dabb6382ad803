"""Kafka's configs of topics, brokers and groups: the catalog of keys (`catalog`), what a resource's
configs resolve to (`resolve`), and where dynamic configs are stored (`groupctl.layout.configs`)."""
