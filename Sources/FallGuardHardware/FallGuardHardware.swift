/// Placeholder; filled by the IIO and GPIO work.
