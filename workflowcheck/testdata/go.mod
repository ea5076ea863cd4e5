module example.test

go 1.26.0
