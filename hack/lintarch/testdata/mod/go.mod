module example.com/lintarchdata

go 1.22
