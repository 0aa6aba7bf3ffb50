module wordcount

go 1.19
