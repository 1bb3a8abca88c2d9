/// Placeholder; filled by the notifier work.
