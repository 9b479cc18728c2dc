"""Business-group quota trees (kuota.dev BizGroupResourceQuota): the pure
accounting. ``usage`` charges pod templates to ResourceQuota keys with model
keys and their prefixes; ``owners`` says how each owning kind is charged
(replicas x templates); ``tree`` holds the tree's rules."""
