extension HistoryTombstone {
    /// The kept values, by field name, as the record format's value tree: for a reader without the program's types
    /// (`kvtool history`), which renders them as it renders records rather than decoding them as Swift types.
    package var keptValues: [String: RecordValue] { values }
}
