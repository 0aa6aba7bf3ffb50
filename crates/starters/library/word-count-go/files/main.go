package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	top := flag.Int("top", Top, "how many common words to list")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "%s\n\nusage: wordcount [--top N] [FILE...]\n", Description)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(Report(string(data), *top))
		return
	}
	status := 0
	for _, name := range flag.Args() {
		data, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			status = 1
			continue
		}
		if flag.NArg() > 1 {
			fmt.Println("== " + name)
		}
		fmt.Println(Report(string(data), *top))
	}
	os.Exit(status)
}
