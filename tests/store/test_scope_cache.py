"""The writer's cache of stored documents: forgetting a scope drops exactly its nodes."""

from __future__ import annotations

from groupctl.layout.paths import group_path, offset_topic_path, offsets_path, topic_path
from groupctl.store.scopes import ScopeCache, StoredDoc


def cache_of(*paths: str) -> ScopeCache:
    cache = ScopeCache()
    cache.docs.update({path: StoredDoc(1, None) for path in paths})
    cache.loaded.update({("group", "g"), ("group", "g2"), ("group", "g/x"), ("topic", "g"), ("topic", "t")})
    return cache


GROUP_G = [group_path("g"), offsets_path("g"), offset_topic_path("g", "t")]
OTHERS = [group_path("g2"), offset_topic_path("g2", "t"), group_path("g/x"), offset_topic_path("g/x", "t"),
          topic_path("g"), topic_path("t")]


def test_forgetting_a_group_drops_its_document_and_offsets_and_no_other_group_or_topic():
    cache = cache_of(*GROUP_G, *OTHERS)
    cache.forget({("group", "g")})
    assert sorted(cache.docs) == sorted(OTHERS)
    assert ("group", "g") not in cache.loaded and ("group", "g2") in cache.loaded


def test_forgetting_a_topic_drops_its_one_node_and_keeps_the_group_of_the_same_name():
    cache = cache_of(*GROUP_G, *OTHERS)
    cache.forget({("topic", "g"), ("group", "g/x")})
    assert sorted(cache.docs) == sorted(GROUP_G + [group_path("g2"), offset_topic_path("g2", "t"), topic_path("t")])
    assert cache.loaded == {("group", "g"), ("group", "g2"), ("topic", "t")}
