module gofix

go 1.26
