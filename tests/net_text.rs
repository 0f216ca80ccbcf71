//! Net files as editors write them.

use ccpn::{Net, NetError};

/// Some Windows editors start UTF-8 files with a byte-order mark: the net loads, and
/// problems are still placed at the right line and column.
#[test]
fn a_net_file_starting_with_a_byte_order_mark_loads() {
    let src = "\u{feff}Net(events: { \"a\": Atomic(type: \"A\") }, outputs: [\"a\"])";
    let net = Net::from_ron("bom.ron", src).unwrap();
    assert_eq!(net.outputs().collect::<Vec<_>>(), ["a"]);
    let bad = "\u{feff}Net(\n  events: { \"b\": Atomic(type: \"B\"), \"a\": Seq(of: [\"b\", \"zz\"]) },\n  outputs: [\"a\"])";
    match Net::from_ron("bom.ron", bad) {
        Err(NetError::Invalid { problems }) => {
            let p = &problems[0];
            assert!(p.message.contains("`zz`"), "{problems:?}");
            assert_eq!((p.line, p.col), (2, 56), "{problems:?}");
        }
        other => panic!("{other:?}"),
    }
}
