use std::io::Read;

fn main() {
    let mut top = wordcount::TOP;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{}\n\nusage: wordcount [--top N] [FILE...]", wordcount::DESCRIPTION);
                return;
            }
            "--top" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => top = n,
                None => {
                    eprintln!("--top needs a number");
                    std::process::exit(2);
                }
            },
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        println!("{}", wordcount::report(&text, top));
        return;
    }
    let mut status = 0;
    for name in &files {
        match std::fs::read_to_string(name) {
            Ok(text) => {
                if files.len() > 1 {
                    println!("== {name}");
                }
                println!("{}", wordcount::report(&text, top));
            }
            Err(e) => {
                eprintln!("{name}: {e}");
                status = 1;
            }
        }
    }
    std::process::exit(status);
}
