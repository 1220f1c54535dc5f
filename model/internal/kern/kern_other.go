//go:build !amd64

package kern

const Available = false

func S6x16(kc int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, acc int) {
	panic("unreachable")
}

func D6x8(kc int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, acc int) {
	panic("unreachable")
}

const AdamAvailable = false

func PoolReluD(r0, r2, bias *float64, k int, out *float64, arg *int32, stride, p0, p2 int) {
	panic("unreachable")
}

func NonFiniteD(x *float64, n int) bool { panic("unreachable") }

func NonFiniteS(x *float32, n int) bool { panic("unreachable") }

func AdamS(w, gr, m, v *float32, n int, p *[8]float32) { panic("unreachable") }

func AdamD(w, gr, m, v *float64, n int, p *[8]float64) { panic("unreachable") }

func AdamGS(w, gr, m, v *float32, n int, p *[8]float32) { panic("unreachable") }

func AdamGD(w, gr, m, v *float64, n int, p *[8]float64) { panic("unreachable") }

const Available512 = false

func S6x32(kc int, a *float32, rsA, csA int, b *float32, ldb int, c *float32, ldc int, acc int) {
	panic("unreachable")
}

func D6x16(kc int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, acc int) {
	panic("unreachable")
}
