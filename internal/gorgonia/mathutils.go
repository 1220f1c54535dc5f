//go:build !amd64 && go1.16

package gorgonia

func divmod(a, b int) (q, r int) {
	q = a / b
	r = a % b
	return
}
