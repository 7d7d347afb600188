package analysis_test

import (
	"fmt"

	"github.com/toolgate/toolgate/tools/discovery/analysis"
)

func ExampleAnalyzer_Terms() {
	a := analysis.New(nil)
	fmt.Println(a.Terms(nil, "Please delete all the uploaded files", ""))
	fmt.Println(a.Terms(nil, "¿Cómo borrar los archivos?", ""))
	fmt.Println(a.Terms(nil, "usuń wszystkie pliki", analysis.Polish))
	// Output:
	// [delet all upload file]
	// [borr archiv]
	// [usun wszystk plik]
}

func ExampleSplitIdentifier() {
	fmt.Println(analysis.SplitIdentifier("listPullRequests"))
	fmt.Println(analysis.SplitIdentifier("gmail.users.messages_send"))
	fmt.Println(analysis.SplitIdentifier("getHTTPResponse_v2"))
	// Output:
	// [list pull requests]
	// [gmail users messages send]
	// [get http response v 2]
}

func ExampleFold() {
	fmt.Println(analysis.Fold("Zażółć gęślą jaźń, Straße, Crème Brûlée"))
	// Output: zazolc gesla jazn, strasse, creme brulee
}

func ExampleDetect() {
	fmt.Println(analysis.Detect("show my invoices"), analysis.Detect("muestra mis facturas"), analysis.Detect("pokaż moje faktury"))
	// Output: en es pl
}
