//go:build go1.16

package gorgonia

func divmod(a, b int) (q, r int)
