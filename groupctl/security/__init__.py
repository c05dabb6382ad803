"""Security, sans-IO: SCRAM credentials, principals and Kafka's ACL model.

Read by the node (authentication, authorization) and by the tools (`user add` computes SCRAM
credentials client-side, as kafka-configs.sh does; `acl add` parses kafka-acls.sh's spellings).
Nothing here touches a socket, the clock or a store.
"""
