"""The aliasing fence: writes through names that may share memory, checked once before lowering."""
